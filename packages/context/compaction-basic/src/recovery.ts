// The relief loop (issue #18 part 1): cheaper reliefs first, a summary last, repeated until the request
// fits or a whole round changes nothing. Pure orchestration: the reliefs are the caller's.

/** One way to make the history smaller: resolves true when it logged a change. */
export interface Relief {
  /** What it did, as a person reads it in the failure message ("pruned old tool results"). */
  name: string
  run(): Promise<boolean>
}

export type ReliefOutcome =
  { ok: true; tried: string[]; rounds: number } | { ok: false; tried: string[]; rounds: number; reason: string }

/**
 * Runs the reliefs in order until `fits()`; a round that changes nothing ends the loop (nothing more can
 * be cut), as does `maxRounds`. `tried` names each relief that changed something, in order, once per round.
 */
export async function relieveUntilFits(
  reliefs: readonly Relief[],
  fits: () => boolean,
  maxRounds: number,
  describe: () => string,
): Promise<ReliefOutcome> {
  const tried: string[] = []
  let rounds = 0
  while (!fits()) {
    if (rounds >= maxRounds)
      return { ok: false, tried, rounds, reason: `still too large after ${rounds} relief rounds (${describe()})` }
    rounds++
    let changed = false
    for (const relief of reliefs) {
      if (!(await relief.run())) continue
      changed = true
      tried.push(relief.name)
      if (fits()) return { ok: true, tried, rounds }
    }
    if (!changed) return { ok: false, tried, rounds, reason: `nothing more could be cut (${describe()})` }
  }
  return { ok: true, tried, rounds }
}
