// Code mode's runtime: each program in a worker thread of its own (docs/architecture.md, "Code mode").
import type { Context } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import { CodeRuntime, type CodeRunRequest, type CodeRunResult } from '@dsh/code-runtime'
import { runInWorker, type Limits } from './run.ts'
import { stripTypes } from './strip.ts'

export type Config = Limits

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  memoryMb: Schema.natural()
    .min(8)
    .default(128)
    .description("A program's heap (the worker's old generation, MB): past it the worker is ended and the call fails."),
  youngGenerationMb: Schema.natural().min(1).default(16).description("A program's young generation (MB)."),
  stackMb: Schema.natural().min(1).default(4).description("A program's stack (MB)."),
  maxOutputChars: Schema.natural()
    .min(1)
    .default(100_000)
    .description('Characters a program may print (console.*); the rest is dropped and counted.'),
  maxToolCalls: Schema.natural()
    .min(1)
    .default(500)
    .description('Tool calls one program may make; the next one ends it with CODE_LIMIT.'),
})

/**
 * `ctx.codeRuntime` on Node `worker_threads` and `node:vm` (provider). Each program gets a fresh worker (no
 * environment, no execArgv, the memory limits above) that runs it in a context with nothing of the host in it;
 * its tool calls come back as text to `request.call`. Types are stripped here, on the host, by TypeScript
 * (loaded with the first program, so boot does not pay for it).
 */
export default class WorkerCodeRuntime extends CodeRuntime {
  static Config = Config

  constructor(
    ctx: Context,
    private readonly config: Config,
  ) {
    super(ctx)
  }

  async run(request: CodeRunRequest): Promise<CodeRunResult> {
    const started = Date.now()
    const stripped = await stripTypes(request.code)
    if (!stripped.ok)
      return {
        output: '',
        outputDropped: 0,
        toolCalls: 0,
        wallMs: Date.now() - started,
        error: { code: 'CODE_SYNTAX', message: stripped.message, position: stripped.position },
      }
    return runInWorker(stripped.program, request, this.config)
  }
}
