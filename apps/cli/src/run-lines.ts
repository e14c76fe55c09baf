import { asksForRunLines } from '@dsh/headless-lines'
import type { LauncherArgs } from './args.ts'

/**
 * Whether a launch that fails before its tree runs owes stdout a `--json` result line: the arguments ask
 * for run lines (`asksForRunLines`, the rule the headless surface applies to arguments it cannot parse)
 * and the profile is headless, or one the launcher does not ship (an unknown profile is the mistake).
 * `args` is absent when the launcher's own flags did not parse: the raw argv is read instead.
 */
export function wantsRunLines(argv: readonly string[], args: LauncherArgs | undefined, shipped: string[]): boolean {
  if (args && (args.version || args.help || args.dumpConfig || args.check)) return false
  const profile = args ? args.profile : profileIn(argv, shipped)
  if (profile !== undefined && profile !== 'headless' && shipped.includes(profile)) return false
  return asksForRunLines(args ? args.rest : argv)
}

/** The profile raw arguments name (`--profile x`, `--profile=x`, or a shipped profile's name first). */
function profileIn(argv: readonly string[], shipped: string[]): string | undefined {
  if (argv[0] !== undefined && shipped.includes(argv[0])) return argv[0]
  for (const [index, arg] of argv.entries()) {
    if (arg === '--') break
    if (arg === '--profile') return argv[index + 1]
    if (arg.startsWith('--profile=')) return arg.slice('--profile='.length)
  }
  return undefined
}
