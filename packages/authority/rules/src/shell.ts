import { parse } from 'shell-quote'

/** Separators between the simple commands of a compound command. */
const SEPARATORS = new Set(['&&', '||', ';', '|', '|&', '&'])

/**
 * Splits a shell command into its simple commands, each as its words joined by one space, or returns
 * undefined when it cannot be split with confidence: command or process substitution, parameter expansion
 * braces, backticks, subshells and groups, line breaks, here-documents, comments, and redirections other
 * than `N>&M` and `> /dev/null`. Callers treat undefined as "matches no allow rule" (fail closed).
 */
export function splitCommand(command: string): string[] | undefined {
  return splitCommandWords(command)?.map((words) => words.join(' '))
}

/** `splitCommand`, keeping each simple command's words apart (a quoted `'git commit'` is one word, not two). */
export function splitCommandWords(command: string): string[][] | undefined {
  // shell-quote keeps backticks and `$(` inside words and reads a newline as a space: refuse them raw.
  if (/[`\n\r]|\$\(|\$\{|[<>]\(/.test(command)) return undefined
  let tokens: ReturnType<typeof parse>
  try {
    tokens = parse(command, (name) => `$${name}`)
  } catch {
    return undefined
  }
  const parts: string[][] = [[]]
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!
    const current = parts.at(-1)!
    if (typeof token === 'string') {
      current.push(token)
      continue
    }
    if (!('op' in token)) return undefined // a comment, or a shape this version does not document
    if (token.op === 'glob') {
      current.push((token as { pattern: string }).pattern)
      continue
    }
    if (SEPARATORS.has(token.op)) {
      parts.push([])
      continue
    }
    const next = tokens[i + 1]
    // `2>&1`: shell-quote gives the descriptor as the word before the operator.
    if (token.op === '>&' && typeof next === 'string' && /^\d+$/.test(next) && /^\d+$/.test(current.at(-1) ?? '')) {
      current.pop()
      i++
      continue
    }
    if ((token.op === '>' || token.op === '>>') && next === '/dev/null') {
      if (/^\d+$/.test(current.at(-1) ?? '')) current.pop()
      i++
      continue
    }
    return undefined
  }
  // An empty part (`a && && b`, a trailing `;`) is a syntax the shell would refuse or ignore: only a final one is dropped.
  if (parts.at(-1)!.length === 0 && parts.length > 1) parts.pop()
  return parts.length && parts.every((words) => words.length > 0 && words.join(' ') !== '') ? parts : undefined
}

/**
 * Programs that run whatever their arguments say: a prefix grant on them (`sh *`, `npx *`) would allow any
 * command, so an answer to one stores the exact command instead.
 */
const RUNNERS = new Set([
  'sh',
  'bash',
  'zsh',
  'dash',
  'env',
  'sudo',
  'doas',
  'xargs',
  'eval',
  'exec',
  'command',
  'nohup',
  'time',
  'timeout',
  'nice',
  'node',
  'python',
  'python3',
  'perl',
  'ruby',
  'npx',
  'bunx',
  'deno',
  'bun',
  'pnpx',
  'uvx',
  'pipx',
  // Programs that start others from their arguments (`find -exec`, `awk 'BEGIN{system(…)}'`, `ssh host cmd`).
  'find',
  'awk',
  'gawk',
  'mawk',
  'nawk',
  'ssh',
  'su',
  'runuser',
  'watch',
  'setsid',
  'stdbuf',
  'strace',
  'chroot',
  'flock',
  'ionice',
  'taskset',
  'unshare',
  'nsenter',
  'parallel',
  'busybox',
  'script',
  'fish',
  'ksh',
  'csh',
  'tcsh',
  'pwsh',
  'php',
  'lua',
  'tclsh',
])

/** Subcommands that run whatever follows them (`npm exec`, `uv run`): `npm exec *` would allow any program. */
const RUNNER_SUBCOMMANDS = new Set([
  'npm exec',
  'npm x',
  'pnpm exec',
  'pnpm dlx',
  'yarn exec',
  'yarn dlx',
  'bun x',
  'uv run',
  'uv tool',
  'poetry run',
  'pipenv run',
  'pdm run',
  'hatch run',
  'bundle exec',
  'mise exec',
  'mise x',
  'nix run',
  'nix shell',
])

/**
 * The rule an "allow for the session / always" answer to a command stores: a single simple command gives
 * its program and, when the next word looks like a subcommand (`npm test`, `git commit`), that word, then ` *`
 * (`touch *` when the next word is not one); a next word that is an option (`git -C dir status`, `ls -la`),
 * a program or subcommand that runs other commands (`sh`, `npx`, `env`, `find`, `npm exec`, …), a compound command and anything else give the exact command (which matches only itself). Undefined when even that is not one line, or when the exact command holds a `*` (which a rule would read as a wildcard).
 */
export function suggestCommandPattern(command: string): string | undefined {
  const trimmed = command.trim()
  if (!trimmed || /[\n\r]/.test(trimmed)) return undefined
  // A rule's `*` is a wildcard and the grammar has no escape: the "exact" rule of `rm -f *.log` would allow
  // `rm -f -r ~ x.log`. Such a line is offered no rule (allow once, or a person types one).
  const exact = trimmed.includes('*') ? undefined : trimmed
  const parts = splitCommand(trimmed)
  if (!parts || parts.length !== 1) return exact
  const words = parts[0]!.split(' ')
  const program = words[0]!
  if (!/^[\w./@+-]+$/.test(program) || RUNNERS.has(program.split('/').at(-1)!)) return exact
  const next = words[1]
  // An option before any subcommand (`git -C dir status`, `git -c core.pager=… log`) changes what every later
  // word means: `git *` would cover every git command, so only the exact line is offered.
  if (next?.startsWith('-')) return exact
  const sub = next && /^[a-z][\w:-]*$/.test(next) ? ` ${next}` : ''
  if (sub && RUNNER_SUBCOMMANDS.has(`${program.split('/').at(-1)!}${sub}`)) return exact
  return `${program}${sub} *`
}
