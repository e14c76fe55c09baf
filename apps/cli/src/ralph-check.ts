// The completion check of `dsh ralph` (docs/ralph.md): confined through the booted tree's sandbox seam.
import type { Credentials } from '@dsh/credentials'
import type { Sandbox, SandboxAuthority } from '@dsh/sandbox'
import type { SandboxPolicy } from '@dsh/sandbox-policy'
import type { SessionAdmin } from '@dsh/session-admin'
import type { RunResult, Subprocess } from '@dsh/subprocess'
import type { RalphArgs } from './ralph-args.ts'
import type { CheckOutcome, RalphRecord } from './ralph-record.ts'

/** Characters of the check's output (its tail) kept in the record and told to the next iteration. */
export const OUTPUT_TAIL_CHARS = 2_000
/** Bytes of the check's output `ctx.subprocess` keeps (head and tail) before the tail above is cut from it. */
const CHECK_OUTPUT_CAP_BYTES = 64_000

export interface TreeServices {
  sandbox: Sandbox
  sandboxPolicy: SandboxPolicy
  subprocess: Subprocess
  credentials: Credentials
  sessionAdmin: SessionAdmin
}

/** The sandbox backend's answer, or why the check cannot be confined. */
export async function confinementOf(services: TreeServices, unconfined: boolean): Promise<RalphRecord['confinement']> {
  if (unconfined) return { confined: false, backend: 'none', enforcement: 'none', network: 'host' }
  const probe = await services.sandbox.probe()
  if (!probe.available)
    throw new UnconfinableError(
      `the check cannot be confined: ${probe.reason ?? `no working ${probe.backend ?? 'sandbox'} backend`}. ` +
        'Install bubblewrap (bwrap; Seatbelt on macOS) so dsh can confine it, or pass --unconfined-check to run the check as your own command.',
    )
  return { confined: true, backend: probe.backend ?? 'unknown', enforcement: 'full', network: 'none' }
}

export class UnconfinableError extends Error {}

/**
 * Runs the completion command once: `bash -c <command>` confined (workspace-write on the workspace alone, the
 * path rules of every session, no network), spawned through `ctx.subprocess` (scrubbed environment, its own
 * process group, killed whole at the deadline).
 */
export async function runCheck(
  services: TreeServices,
  args: RalphArgs,
  confinement: RalphRecord['confinement'],
  signal: AbortSignal,
): Promise<{ outcome: CheckOutcome; enforcement: string }> {
  const argv = ['bash', '-c', args.until]
  let enforcement = 'none'
  let command = argv
  if (confinement.confined) {
    const authority: SandboxAuthority = {
      mode: 'workspace-write',
      writableRoots: [args.cwd],
      paths: services.sandboxPolicy.pathRules([args.cwd]),
      network: { kind: 'none' },
    }
    const confined = await services.sandbox.confine(argv, { cwd: args.cwd, authority })
    if (confined.enforcement === 'none')
      throw new UnconfinableError(`the sandbox (${confined.backend}) did not confine the check; refusing to run it`)
    command = confined.argv
    enforcement = confined.enforcement
  }
  const result: RunResult = await services.subprocess.run(command, {
    cwd: args.cwd,
    timeoutMs: Math.ceil(args.checkTimeoutSeconds * 1000),
    outputCapBytes: CHECK_OUTPUT_CAP_BYTES,
    signal,
  })
  const output = services.credentials.redact(result.output)
  return {
    outcome: {
      exitCode: result.exitCode,
      signal: result.signal,
      timedOut: result.timedOut,
      ms: result.durationMs,
      outputTail: output.slice(-OUTPUT_TAIL_CHARS),
    },
    enforcement,
  }
}
