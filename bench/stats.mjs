// Small statistics helpers shared by the benchmarks.
export function summarize(samples) {
  const sorted = [...samples].sort((a, b) => a - b)
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
  return { n: sorted.length, min: sorted[0], median: at(0.5), p90: at(0.9), max: sorted.at(-1) }
}

export const ms = (value) => `${value.toFixed(1)} ms`

/**
 * The argv of a bare confined command (bubblewrap's namespaces, no bridge, no path rules) before the command:
 * the measure of the machine's load that bench/step and bench/confine put beside their figures.
 */
export const BARE_BWRAP = [
  '--ro-bind',
  '/',
  '/',
  '--dev',
  '/dev',
  '--proc',
  '/proc',
  '--tmpfs',
  '/tmp',
  '--unshare-pid',
  '--unshare-net',
  '--die-with-parent',
  '--new-session',
  '--',
]
