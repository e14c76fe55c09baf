import type { PathAuthority } from './paths.ts'

/** The three sandbox modes of DESIGN §8, from least to most authority. */
export const SANDBOX_MODES = ['read-only', 'workspace-write', 'danger-full-access'] as const
export type SandboxMode = (typeof SANDBOX_MODES)[number]

/**
 * What one agent may do to the machine right now: the mode in force and the roots it may write under
 * (absolute, symlinks resolved; empty in read-only). Derived from the session log by the sandbox policy,
 * passed explicitly to every provider that fences effects (fs, shell). `paths` (secret and protected paths)
 * is absent only in authorities built by hand for a single effect; the policy always sets it.
 */
export interface SandboxAuthority {
  mode: SandboxMode
  writableRoots: string[]
  paths?: PathAuthority
}
