/**
 * First words that make the arguments something other than a headless run: the headless surface's
 * listing and editing commands (their `--json` prints their own document, not run lines) and the
 * launcher's own commands. `resume` and `fork` are runs.
 */
export const NOT_A_RUN = new Set(['sessions', 'grants', 'usage', 'mcp', 'rewind', 'prompt', 'eval', 'ralph'])

/**
 * Whether the tree's arguments of a headless launch ask for `--json` run lines, read without parsing
 * them (they may be the reason the launch failed): `--json` before any `--`, and a first word, the first
 * argument not starting with `-`, that is not in NOT_A_RUN. A flag's value taken for the first word
 * (`--model sessions --json`) is read as that word.
 */
export function asksForRunLines(argv: readonly string[]): boolean {
  const end = argv.indexOf('--')
  const flags = end === -1 ? argv : argv.slice(0, end)
  if (!flags.includes('--json')) return false
  const word = flags.find((arg) => !arg.startsWith('-'))
  return word === undefined || !NOT_A_RUN.has(word)
}
