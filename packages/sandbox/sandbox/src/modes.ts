import type { PathAuthority } from './paths.ts'

/** The three sandbox modes of docs/security.md, from least to most authority. */
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
  /**
   * Folders a confined command must be able to read although the sandbox hides them (its private /tmp):
   * bound read-only, under the writable roots and the path rules. Absent: none.
   */
  readableRoots?: string[]
  paths?: PathAuthority
  /** What a confined command may reach on the network; absent means `none` (fail closed). */
  network?: SandboxNetwork
}

/**
 * The network of a command (docs/security.md): `none`, a private namespace with only its own loopback; `proxy`,
 * the same namespace with the host's allow-list proxy reachable through `socket` (a Unix socket path on the
 * host); `host`, the host's network, loopback services included. Unconfined modes always have the host's.
 */
export type SandboxNetwork = { kind: 'none' } | { kind: 'proxy'; socket: string } | { kind: 'host' }
