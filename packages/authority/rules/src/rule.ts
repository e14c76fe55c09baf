/**
 * The one grant rule syntax: `kind(pattern)`. Kinds and what their pattern matches:
 * - `bash(npm test *)`: a command the shell runs confined (a compound command matches only when every part does);
 * - `unconfined(npm test *)`: the same for a command run outside the sandbox (`sandbox: false`);
 * - `writegit(git commit *)`: the same for a command run confined but with `.git` writable (`writeGit: true`),
 *   which `bash(…)` never covers: git later runs that folder's hooks and config unconfined;
 * - `write(docs/**)`, `edit(src/**)`: a path, relative to the session's workspace or absolute;
 * - `network(*.example.org)`: a host name;
 * - `hooks(sha256:…)`: the hook commands of a workspace's hooks files, by digest (exact only: a changed file
 *   has another digest, so it is asked about again);
 * - `mcp(github/create_issue)`, `mcp(github/*)`: an MCP server's tool, as `<server>/<tool>` (the server's tool name);
 * - `mcpserver(<name>@<digest>)`: starting one workspace MCP server exactly as its file configures it (exact only).
 * A pattern without `*` is exact. In command patterns `*` matches anything and a final ` *` also matches
 * nothing (`npm test *` matches `npm test` and `npm test -- x`, never `npm testx`).
 */
export const RULE_KINDS = [
  'bash',
  'unconfined',
  'writegit',
  'write',
  'edit',
  'network',
  'hooks',
  'mcp',
  'mcpserver',
] as const
export type RuleKind = (typeof RULE_KINDS)[number]

export interface Rule {
  kind: RuleKind
  pattern: string
  /** The rule as written (normalized: no surrounding spaces). */
  text: string
}

export class RuleError extends Error {
  override name = 'RuleError'
  readonly code = 'INVALID_RULE'
}

const SHAPE = /^([a-z]+)\((.*)\)$/s

/** Parses one rule; throws RuleError naming `where` (a setting, a file) and what is wrong. */
export function parseRule(text: unknown, where = 'rule'): Rule {
  if (typeof text !== 'string')
    throw new RuleError(`${where}: a rule is a string like bash(npm test *), got ${JSON.stringify(text)}`)
  const trimmed = text.trim()
  const shape = SHAPE.exec(trimmed)
  if (!shape)
    throw new RuleError(
      `${where}: "${text}" is not a rule (expected kind(pattern), e.g. bash(npm test *) or write(docs/**))`,
    )
  const [, kind, pattern] = shape as unknown as [string, string, string]
  if (!RULE_KINDS.includes(kind as RuleKind))
    throw new RuleError(`${where}: unknown rule kind "${kind}" in "${text}" (known: ${RULE_KINDS.join(', ')})`)
  if (!pattern.trim()) throw new RuleError(`${where}: "${text}" has an empty pattern (use * to mean everything)`)
  if (/[\n\r]/.test(pattern)) throw new RuleError(`${where}: "${text}" spans lines; a rule is one line`)
  return { kind: kind as RuleKind, pattern: pattern.trim(), text: `${kind}(${pattern.trim()})` }
}

/** Whether a text is a valid rule (for validators: undefined when it is, else the message). */
export function ruleProblem(text: unknown, where?: string): string | undefined {
  try {
    parseRule(text, where)
    return undefined
  } catch (error) {
    return (error as Error).message
  }
}
