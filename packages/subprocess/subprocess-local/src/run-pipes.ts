import { spawn } from 'node:child_process'
import { type RunOptions, type RunResult, SubprocessError } from '@dsh/subprocess'
import { CappedOutput } from '@dsh/subprocess-kit'
import { groupAlive, killGroup } from './process-group.ts'
import type { LiveRun, RunLimits } from './limits.ts'

/**
 * Runs `argv` with pipes, as the leader of a new process group (`detached` is setsid on POSIX), so a
 * deadline, an abort or the provider's disposal can kill everything the command started. When the leader
 * exits, whatever it left running in its group is killed too: a one-shot command owns no survivors.
 */
export function runPipes(argv: string[], options: RunOptions, limits: RunLimits, live: LiveRun): Promise<RunResult> {
  const started = performance.now()
  const output = new CappedOutput(limits.outputCapBytes, options.fullOutput, options.onOutput)
  const errors = options.stderr === 'separate' ? new CappedOutput(limits.outputCapBytes) : output
  const child = spawn(argv[0]!, argv.slice(1), {
    cwd: options.cwd,
    env: options.env, // already scrubbed by the provider (Subprocess.environment)
    detached: true,
    stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  })
  let timedOut = false
  let aborted = false
  let killing: Promise<void> | undefined
  const killAll = () => (killing ??= child.pid === undefined ? Promise.resolve() : killGroup(child.pid, limits))
  live.terminate = killAll

  return new Promise<RunResult>((resolve, reject) => {
    const timer = setTimeout(() => {
      timedOut = true
      void killAll()
    }, limits.timeoutMs)
    const onAbort = () => {
      aborted = true
      void killAll()
    }
    options.signal?.addEventListener('abort', onAbort, { once: true })
    // A cancel that came before the spawn must still stop the command (addEventListener never fires for it).
    if (options.signal?.aborted) onAbort()
    const cleanup = () => {
      clearTimeout(timer)
      options.signal?.removeEventListener('abort', onAbort)
    }

    let spawned = false
    child.on('spawn', () => (spawned = true))
    child.on('error', (error: NodeJS.ErrnoException) => {
      if (spawned) return // a failed signal or pipe after start; 'exit' still comes
      cleanup()
      reject(new SubprocessError('SPAWN_FAILED', `cannot start "${argv[0]}" in ${options.cwd}: ${error.message}`))
    })
    child.stdout!.on('data', (chunk: Buffer) => output.push(chunk))
    child.stderr!.on('data', (chunk: Buffer) => errors.push(chunk))
    if (options.input !== undefined) {
      child.stdin!.on('error', () => {}) // the child may exit without reading; that is not our failure
      child.stdin!.end(options.input)
    }

    let closed = false
    child.on('close', () => (closed = true))
    child.on('exit', async (exitCode, signal) => {
      clearTimeout(timer) // the deadline is the command's; draining after it is ours
      if (groupAlive(child.pid!)) await killAll()
      // Pipes close once every holder is gone; one that escaped the group (setsid) could hold them forever.
      if (!closed) {
        await new Promise<void>((done) => {
          // The grace timer must not outlive the wait: it would hold the process open after the tree drained.
          const grace = setTimeout(done, limits.killGraceMs)
          child.once('close', () => {
            clearTimeout(grace)
            done()
          })
        })
      }
      child.stdout!.destroy()
      child.stderr!.destroy()
      cleanup()
      const saved = output.saved()
      resolve({
        exitCode,
        signal,
        output: output.text(),
        ...(errors !== output ? { stderr: errors.text() } : {}),
        truncated: output.truncated || errors.truncated,
        ...(saved ? { saved } : {}),
        timedOut,
        aborted,
        durationMs: Math.round(performance.now() - started),
      })
    })
  })
}
