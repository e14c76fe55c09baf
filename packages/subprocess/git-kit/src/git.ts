// The one way dsh runs git itself (docs/security.md, "Defences and the tests that show them"; docs/architecture.md, "Review and
// rewind"). A repository is the model's to write (`.gitattributes`) and a hostile clone's to configure
// (`.git/config`): every setting through which git would start a program — hooks, fsmonitor, clean/smudge
// filters, textconv, an external diff, a pager, ssh, askpass, credential helpers, any network transport — is
// switched off on the command line, which wins over every config file, and git gets dsh's scrubbed
// environment with no system or global config.
import { execFile } from 'node:child_process'
import { EMPTY_POLICY, scrubEnvironment } from '@dsh/env-policy'

/**
 * Overrides given to every git dsh runs. Each names a config key a repository could point at a program;
 * `-c` beats `.git/config` (and anything it includes). Filters are per driver name, so `gitFilterOverrides`
 * adds those a repository defines; plumbing that reads contents runs with `--no-filters` besides.
 */
export const GIT_SAFE_CONFIG: readonly string[] = [
  'core.hooksPath=/dev/null',
  'core.fsmonitor=false',
  'core.untrackedCache=false',
  'core.pager=cat',
  'core.askPass=',
  'core.sshCommand=',
  'core.editor=false',
  'core.attributesFile=/dev/null',
  'credential.helper=',
  'diff.external=',
  'pager.status=false',
  'color.ui=never',
  'protocol.allow=never',
  'gc.auto=0',
  'maintenance.auto=false',
  'submodule.recurse=false',
]

/** The environment of a git dsh runs: dsh's scrubbed one, no system or global config, no pager, no prompts. */
export function gitEnvironment(extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  const { env } = scrubEnvironment(process.env, EMPTY_POLICY)
  return {
    ...env,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_PAGER: 'cat',
    PAGER: 'cat',
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_NO_REPLACE_OBJECTS: '1',
    ...extra,
  }
}

/** `-c filter.<driver>.{clean,smudge,process}=` for each driver name, so no filter a repository defines runs. */
export function gitFilterOverrides(drivers: readonly string[]): string[] {
  return drivers.flatMap((driver) => [
    '-c',
    `filter.${driver}.clean=`,
    '-c',
    `filter.${driver}.smudge=`,
    '-c',
    `filter.${driver}.process=`,
    '-c',
    `filter.${driver}.required=false`,
  ])
}

/** The argv of one git command dsh runs: the safe overrides, `--no-pager`, then `args`. */
export function gitArgv(args: readonly string[], filterDrivers: readonly string[] = []): string[] {
  return [
    'git',
    '--no-pager',
    ...GIT_SAFE_CONFIG.flatMap((setting) => ['-c', setting]),
    ...gitFilterOverrides(filterDrivers),
    ...args,
  ]
}

export interface GitRunOptions {
  cwd: string
  timeoutMs: number
  /** Variables added to the git environment (GIT_INDEX_FILE, GIT_LITERAL_PATHSPECS). */
  env?: Readonly<Record<string, string>>
  /** Written to git's standard input. */
  input?: string | Buffer
  /** Filter driver names to switch off besides (see `filterDrivers`). */
  filterDrivers?: readonly string[]
  /** Wraps the argv (the sandbox's confinement); undefined from it means "do not run". */
  confine?: (argv: string[]) => Promise<string[] | undefined>
  maxBytes?: number
}

export class GitError extends Error {
  override name = 'GitError'
  constructor(
    message: string,
    /** git's exit code (undefined when it did not exit by itself). */
    readonly exitCode?: number,
  ) {
    super(message)
  }
}

/** Runs git as `gitArgv` says, with `gitEnvironment`; its standard output, or a GitError naming the command. */
export async function runGit(args: readonly string[], options: GitRunOptions): Promise<Buffer> {
  const plain = gitArgv(args, options.filterDrivers)
  const argv = options.confine ? await options.confine(plain) : plain
  if (!argv) throw new GitError(`git ${args[0]}: not run (it cannot be confined here)`)
  return new Promise((resolve, reject) => {
    const child = execFile(
      argv[0]!,
      argv.slice(1),
      {
        cwd: options.cwd,
        encoding: 'buffer',
        timeout: options.timeoutMs,
        killSignal: 'SIGKILL',
        maxBuffer: options.maxBytes ?? 256 * 1024 * 1024,
        env: gitEnvironment(options.env),
      },
      (error, stdout, stderr) =>
        error
          ? reject(
              new GitError(
                `git ${args[0]}: ${stderr.toString().trim() || error.message}`,
                typeof error.code === 'number' ? error.code : undefined,
              ),
            )
          : resolve(stdout),
    )
    child.stdin?.on('error', () => undefined) // git may exit before reading all of it; the exit code tells
    child.stdin?.end(options.input ?? '')
  })
}

/**
 * The filter driver names the repository's config defines (`filter.<name>.*`), to switch each off: git
 * reads filters from config only, so these are every driver a `.gitattributes` line can name.
 */
export async function filterDrivers(options: Omit<GitRunOptions, 'filterDrivers' | 'input'>): Promise<string[]> {
  let out: Buffer
  try {
    out = await runGit(['config', '-z', '--name-only', '--get-regexp', '^filter\\.'], options)
  } catch (error) {
    // `git config --get-regexp` exits 1 when nothing matches.
    if (error instanceof GitError && error.exitCode === 1) return []
    throw error
  }
  const names = out
    .toString('utf8')
    .split('\0')
    .filter(Boolean)
    .map((key) => /^filter\.(.+)\.[^.]+$/s.exec(key)?.[1])
    .filter((name): name is string => !!name)
  return [...new Set(names)]
}
