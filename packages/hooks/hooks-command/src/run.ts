import { createHash } from 'node:crypto'
import type { Context } from '@dsh/cordis'
import type {} from '@dsh/credentials'
import type { HookCommand, HookRunData, HookTrigger } from '@dsh/hooks'
import type {} from '@dsh/sandbox'
import type {} from '@dsh/sandbox-policy'
import type {} from '@dsh/subprocess'
import { readExit, type HookAnswer, type HookExit } from './answer.ts'

export interface RunLimits {
  /** Used when the hook names no `timeout` (seconds). */
  defaultTimeoutSeconds: number
  outputCapBytes: number
}

/**
 * Runs one hook as `bash -c <command>` the way the model's commands run (docs/security.md): confined by
 * ctx.sandbox under the session's authority (so a workspace hook in `workspace-write` cannot write outside
 * the workspace or read secret paths) and spawned by ctx.subprocess (its environment policy, its own process
 * group killed at the deadline). The input JSON goes to stdin; stdout and stderr are read apart.
 */
export async function runHook(
  ctx: Context,
  hook: HookCommand,
  input: string,
  trigger: HookTrigger,
  limits: RunLimits,
): Promise<{ data: HookRunData; answer: HookAnswer }> {
  const timeoutSeconds = hook.timeout ?? limits.defaultTimeoutSeconds
  const started = performance.now()
  let exit: HookExit
  let answer: HookAnswer
  try {
    const authority = await ctx.sandboxPolicy.authority(trigger.session)
    const { argv } = await ctx.sandbox.confine(['bash', '-c', hook.command], { cwd: trigger.cwd, authority })
    const result = await ctx.subprocess.run(argv, {
      cwd: trigger.cwd,
      // stdin is a socket pair: a bash at shell level 1 would then read ~/.bashrc as if started by sshd.
      env: { CLAUDE_PROJECT_DIR: trigger.cwd, DSH_PROJECT_DIR: trigger.cwd, SHLVL: '1' },
      input,
      timeoutMs: Math.round(timeoutSeconds * 1000),
      outputCapBytes: limits.outputCapBytes,
      stderr: 'separate',
      signal: trigger.signal,
    })
    exit = {
      exitCode: result.exitCode,
      stdout: redact(ctx, result.output),
      stderr: redact(ctx, result.stderr ?? ''),
      timedOut: result.timedOut,
    }
    // A guard stopped by a cancel did not decide: the call it guarded must not run on its silence.
    answer = result.aborted
      ? { decision: 'error', reason: 'stopped: the turn was cancelled', failure: 'was stopped by the cancel' }
      : readExit(hook.event, exit, timeoutSeconds)
  } catch (error) {
    const message = redact(ctx, error instanceof Error ? error.message : String(error))
    exit = { exitCode: null, stdout: '', stderr: '', timedOut: false }
    answer = { decision: 'error', reason: `could not run: ${message}`, failure: `could not run (${message})` }
  }
  const data: HookRunData = {
    event: hook.event,
    command: hook.command,
    file: hook.file,
    origin: hook.origin,
    ...(hook.matcher !== undefined ? { matcher: hook.matcher } : {}),
    ...(trigger.callId ? { callId: trigger.callId } : {}),
    inputDigest: `sha256:${createHash('sha256').update(input).digest('hex')}`,
    exitCode: exit.exitCode,
    timedOut: exit.timedOut,
    durationMs: Math.round(performance.now() - started),
    stdout: exit.stdout,
    stderr: exit.stderr,
    decision: answer.decision,
    ...(answer.reason ? { reason: answer.reason } : {}),
    ...(answer.updatedInput ? { updatedInput: answer.updatedInput } : {}),
  }
  return { data, answer }
}

/** Hook output goes to the log and maybe to the model: never a secret value in clear. */
function redact(ctx: Context, text: string): string {
  return ctx.get('credentials')?.redact(text) ?? text
}
