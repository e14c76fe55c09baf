// One program in one worker thread (docs/architecture.md, "Code mode").
import { Worker } from 'node:worker_threads'
import type { BridgeReply, CodeError, CodeRunRequest, CodeRunResult } from '@dsh/code-runtime'
import { PRELUDE } from './prelude.ts'
import type { StrippedProgram } from './strip.ts'
import { WORKER_SOURCE } from './worker-source.ts'

export interface Limits {
  memoryMb: number
  youngGenerationMb: number
  stackMb: number
  maxOutputChars: number
  maxToolCalls: number
}

/** What the prelude's `drain` reports (parsed on the host from the text it returned). */
interface Batch {
  calls: { id: number; name: string; args: string }[]
  out: string
  dropped: number
  done: { ok: true; value?: string } | { ok: false; message: string; stack: string } | null
}

const POSITION = /program\.js:(\d+):(\d+)/

/**
 * Runs `program` in a fresh worker and settles once it ended — finished, failed, past a limit or cancelled —
 * and every call it started has its result (those results are logged before the program's). The worker is
 * ended from here: a program that never yields cannot hold the host.
 */
export function runInWorker(program: StrippedProgram, request: CodeRunRequest, limits: Limits): Promise<CodeRunResult> {
  const started = Date.now()
  const allowed = new Set(request.tools)
  let output = ''
  let outputDropped = 0
  let toolCalls = 0
  let repliesSent = 0
  const inFlight = new Set<Promise<void>>()
  let settled = false

  return new Promise<CodeRunResult>((resolve) => {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      env: {},
      execArgv: [],
      argv: [],
      stdout: true,
      stderr: true,
      stdin: false,
      trackUnmanagedFds: true,
      resourceLimits: {
        maxOldGenerationSizeMb: limits.memoryMb,
        maxYoungGenerationSizeMb: limits.youngGenerationMb,
        stackSizeMb: limits.stackMb,
      },
      workerData: {
        prelude: PRELUDE,
        program: program.js,
        config: JSON.stringify({
          tools: request.tools,
          maxOutputChars: limits.maxOutputChars,
          maxToolCalls: limits.maxToolCalls,
        }),
      },
    })
    // Its stdout and stderr are pipes nobody reads into the terminal; drain them so a write never blocks.
    worker.stdout.resume()
    worker.stderr.resume()

    // The wall clock runs while the program itself runs: waiting for a tool call (an approval) does not count.
    let remaining = request.timeoutMs
    let clockStarted = Date.now()
    let timer: NodeJS.Timeout | undefined
    const startClock = () => {
      clockStarted = Date.now()
      timer = setTimeout(
        () =>
          end({
            code: 'CODE_TIMEOUT',
            message: `the program ran longer than its ${request.timeoutMs} ms and was stopped`,
          }),
        Math.max(0, remaining),
      )
    }
    const stopClock = () => {
      if (!timer) return
      clearTimeout(timer)
      timer = undefined
      remaining -= Date.now() - clockStarted
    }
    startClock()

    const onAbort = () => end({ code: 'ABORTED', message: 'the turn was cancelled and the program was stopped' })
    if (request.signal.aborted) return void onAbort()
    request.signal.addEventListener('abort', onAbort, { once: true })

    function end(error: CodeError | undefined, value?: string) {
      if (settled) return
      settled = true
      stopClock()
      request.signal.removeEventListener('abort', onAbort)
      void worker.terminate()
      const result: CodeRunResult = {
        output,
        outputDropped,
        toolCalls,
        wallMs: 0,
        ...(value !== undefined ? { value } : {}),
        ...(error ? { error } : {}),
      }
      // Every call the program started keeps its place in the log before the program's own result.
      void Promise.allSettled(inFlight).then(() => resolve({ ...result, wallMs: Date.now() - started }))
    }

    const takeOutput = (text: string, dropped: number) => {
      const room = limits.maxOutputChars - output.length
      outputDropped += dropped + Math.max(0, text.length - room)
      if (room > 0) output += text.slice(0, room)
    }

    const bridge = (call: Batch['calls'][number]) => {
      toolCalls++
      if (toolCalls > limits.maxToolCalls)
        return end({ code: 'CODE_LIMIT', message: `the program made more than ${limits.maxToolCalls} tool calls` })
      const reply = (answer: BridgeReply) => {
        repliesSent++
        // A worker_threads port, not a window: there is no origin to name.
        // oxlint-disable-next-line unicorn/require-post-message-target-origin
        if (!settled) worker.postMessage({ type: 'reply', id: call.id, reply: JSON.stringify(answer) })
      }
      if (!allowed.has(call.name) || typeof call.args !== 'string') {
        return reply({ ok: false, code: 'UNKNOWN_TOOL', message: `there is no function ${String(call.name)}` })
      }
      if (inFlight.size === 0) stopClock()
      const task = request
        .call(call.name, call.args)
        .catch((error): BridgeReply => ({ ok: false, code: 'TOOL_FAILED', message: String(error) }))
        .then((answer) => {
          inFlight.delete(task)
          if (!inFlight.size && !settled) startClock()
          reply(answer)
        })
      inFlight.add(task)
    }

    worker.on(
      'message',
      (message: { type: string; batch?: string; handled?: number; message?: string; stack?: string }) => {
        if (settled) return
        if (message.type === 'syntax') {
          const at = POSITION.exec(message.stack ?? '')
          const position = at ? program.original(Number(at[1]), Number(at[2])) : undefined
          return end({
            code: 'CODE_SYNTAX',
            message: message.message ?? 'syntax error',
            ...(position ? { position } : {}),
          })
        }
        if (message.type !== 'batch' || typeof message.batch !== 'string') {
          return end({ code: 'CODE_CRASHED', message: message.message ?? 'the program broke the bridge' })
        }
        let batch: Batch
        try {
          batch = JSON.parse(message.batch) as Batch
        } catch {
          return end({ code: 'CODE_CRASHED', message: 'the program broke the bridge (unreadable batch)' })
        }
        takeOutput(String(batch.out ?? ''), Number(batch.dropped) || 0)
        for (const call of Array.isArray(batch.calls) ? batch.calls : []) if (!settled) bridge(call)
        if (settled) return
        const done = batch.done
        if (done) {
          if (done.ok) return end(undefined, typeof done.value === 'string' ? done.value : undefined)
          const at = POSITION.exec(String(done.stack))
          const position = at ? program.original(Number(at[1]), Number(at[2])) : undefined
          return end({ code: 'CODE_THROWN', message: String(done.message), ...(position ? { position } : {}) })
        }
        const quiet = !batch.calls?.length && !inFlight.size && message.handled === repliesSent
        if (quiet)
          end({
            code: 'CODE_THROWN',
            message: 'the program waits for a promise nothing will settle (it has no tool call running)',
          })
      },
    )
    worker.on('error', (error: Error & { code?: string }) => {
      if (error.code === 'ERR_WORKER_OUT_OF_MEMORY')
        end({
          code: 'CODE_MEMORY',
          message: `the program used more than its ${limits.memoryMb} MB of memory and was stopped`,
        })
      else end({ code: 'CODE_CRASHED', message: `the program's worker failed: ${error.message}` })
    })
    worker.on('exit', (exitCode) => end({ code: 'CODE_CRASHED', message: `the program's worker exited (${exitCode})` }))
  })
}
