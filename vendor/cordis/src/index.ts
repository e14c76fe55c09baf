// The one door to the Cordis framework (see vendor/README.md). Upstream rc.10 has no default export.
export * from 'cordis'

import type { FiberState } from 'cordis'

/**
 * Cordis' fiber states at run time. Upstream's `FiberState` is an ambient const enum, which code built with
 * `verbatimModuleSyntax` cannot inline; the `satisfies` below fails the build if upstream renumbers a state.
 */
export const FIBER_STATE = {
  PENDING: 0,
  LOADING: 1,
  ACTIVE: 2,
  FAILED: 3,
  DISPOSED: 4,
  UNLOADING: 5,
} as const satisfies {
  PENDING: FiberState.PENDING
  LOADING: FiberState.LOADING
  ACTIVE: FiberState.ACTIVE
  FAILED: FiberState.FAILED
  DISPOSED: FiberState.DISPOSED
  UNLOADING: FiberState.UNLOADING
}

/** The lower-case name of a fiber state (`active`, `failed`…), or undefined for a number that is none. */
export function fiberStateName(state: number | undefined): string | undefined {
  return Object.entries(FIBER_STATE)
    .find(([, value]) => value === state)?.[0]
    .toLowerCase()
}
