import { randomBytes } from 'node:crypto'
import { constants } from 'node:os'
import { type IPty, spawn as spawnPty } from 'node-pty'
import { type PtyExit, type PtyProcess, type RunOptions, type RunResult, SubprocessError } from '@dsh/subprocess'
import { CappedOutput } from '@dsh/subprocess-kit'
import { groupAlive, killGroup, type LadderTimings } from './process-group.ts'
import type { LiveRun, RunLimits } from './limits.ts'

export interface TerminalSize {
  cols: number
  rows: number
  name: string
}

const signalNames = new Map(Object.entries(constants.signals).map(([name, number]) => [number, name]))

function toExit(event: { exitCode: number; signal?: number }): PtyExit {
  const signal = event.signal ? (signalNames.get(event.signal) ?? String(event.signal)) : null
  return { exitCode: signal ? null : event.exitCode, signal }
}

function definedEnv(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined))
}

/** Spawns on a fresh terminal. node-pty makes the child a session leader, so its pid is its group id. */
function spawnOnTerminal(
  argv: string[],
  cwd: string,
  env: Record<string, string | undefined> | undefined,
  size: TerminalSize,
): IPty {
  try {
    return spawnPty(argv[0]!, argv.slice(1), {
      name: size.name,
      cols: size.cols,
      rows: size.rows,
      cwd,
      env: definedEnv(env ?? {}),
    })
  } catch (error) {
    throw new SubprocessError(
      'SPAWN_FAILED',
      `cannot start "${argv[0]}" on a terminal in ${cwd}: ${error instanceof Error ? error.message : error}`,
      { cause: error },
    )
  }
}

/** A live terminal child whose group dies by the kill ladder. */
export function openTerminal(
  argv: string[],
  cwd: string,
  env: Record<string, string | undefined> | undefined,
  size: TerminalSize,
  timings: LadderTimings,
): PtyProcess {
  const child = spawnOnTerminal(argv, cwd, env, size)
  const exited = new Promise<PtyExit>((resolve) => child.onExit((event) => resolve(toExit(event))))
  let terminating: Promise<PtyExit> | undefined
  return {
    pid: child.pid,
    write: (data) => child.write(data),
    onData(listener) {
      const subscription = child.onData(listener)
      return () => subscription.dispose()
    },
    exited,
    signal: (signal) => {
      try {
        process.kill(child.pid, signal)
      } catch {} // already gone: nothing to signal
    },
    terminate: () => (terminating ??= killGroup(child.pid, timings).then(() => exited)),
  }
}

/**
 * Runs `argv` to completion on a terminal. node-pty may report the exit before the last output is read
 * (microsoft/node-pty#72), so a small `sh` wrapper prints a marker after the command and waits for our
 * acknowledgement before it exits: everything before the marker has then been read. The command's status
 * travels in the marker.
 */
export function runOnTerminal(
  argv: string[],
  options: RunOptions,
  size: TerminalSize,
  limits: RunLimits,
  live: LiveRun,
): Promise<RunResult> {
  const started = performance.now()
  const tag = `DSH-END-${randomBytes(8).toString('hex')}:`
  const script = `"$@"; s=$?; printf '\\n%s%d\\n' '${tag}' "$s"; IFS= read -r _; exit "$s"`
  const terminal = openTerminal(['/bin/sh', '-c', script, 'dsh-pty', ...argv], options.cwd, options.env, size, limits)
  live.terminate = terminal.terminate
  const output = new CappedOutput(
    limits.outputCapBytes,
    options.fullOutput && { ...options.fullOutput, fromTerminal: true },
    options.onOutput,
  )
  const markerPattern = new RegExp(`\\r?\\n?${tag}(\\d+)\\r?\\n`)
  let pending = ''
  let status: number | undefined
  let timedOut = false
  let aborted = false

  const timer = setTimeout(() => {
    timedOut = true
    void terminal.terminate()
  }, limits.timeoutMs)
  const stopData = terminal.onData((data) => {
    if (status !== undefined) return
    pending += data
    const match = markerPattern.exec(pending)
    if (match) {
      output.push(pending.slice(0, match.index))
      status = Number(match[1])
      clearTimeout(timer)
      terminal.write('\n')
      return
    }
    // Keep what could be the start of a marker split across chunks.
    const keep = tag.length + 16
    if (pending.length > keep) {
      output.push(pending.slice(0, pending.length - keep))
      pending = pending.slice(pending.length - keep)
    }
  })
  const onAbort = () => {
    aborted = true
    void terminal.terminate()
  }
  options.signal?.addEventListener('abort', onAbort, { once: true })
  if (options.signal?.aborted) onAbort() // cancelled before it started

  return terminal.exited.then(async (exit) => {
    clearTimeout(timer)
    if (groupAlive(terminal.pid)) await terminal.terminate() // a one-shot command owns no survivors
    options.signal?.removeEventListener('abort', onAbort)
    stopData()
    if (status === undefined) output.push(pending)
    const fromMarker = status !== undefined && !timedOut && !aborted
    const saved = output.saved()
    return {
      ...(saved ? { saved } : {}),
      exitCode: fromMarker ? status! : exit.exitCode,
      signal: fromMarker ? null : exit.signal,
      output: output.text().replace(/\r\n/g, '\n'),
      truncated: output.truncated,
      timedOut,
      aborted,
      durationMs: Math.round(performance.now() - started),
    }
  })
}
