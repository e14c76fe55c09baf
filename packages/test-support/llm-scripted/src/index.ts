import { type Context, Service } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import {
  LLM_ERROR_CODES,
  type FinishReason,
  type LlmAdapter,
  type LlmErrorCode,
  type LlmRequest,
  type ModelInfo,
  type StreamChunk,
  type Usage,
} from '@dsh/llm'

/** One scripted model response. */
export interface ScriptedResponse {
  text?: string
  reasoning?: string
  toolCalls?: { id?: string; name: string; arguments: unknown }[]
  usage?: Partial<Usage>
  finish?: FinishReason
  /** Finish with this failure instead of content. */
  error?: { code: LlmErrorCode; message?: string; retryAfterMs?: number }
  /** Send the text, then wait (never finishing) until the request is aborted. */
  hang?: boolean
  /** How many deltas the text and reasoning are split into. */
  pieces?: number
  /** Wait before each delta. */
  delayMs?: number
}

/** A request as the scripted model received it (without its signal). */
export type RecordedRequest = Omit<LlmRequest, 'signal'>

declare module '@dsh/cordis' {
  interface Context {
    scriptedLlm: ScriptedLlm
  }
}

export interface Config {
  record: boolean
  provider: string
  models: { id: string; contextWindow: number; images: boolean }[]
  script: ScriptedResponse[]
}

/** A nested object that may be absent (schemastery would otherwise fill `{}` and demand its required keys). */
const optional = <T>(schema: Schema<T>) =>
  Schema.union([schema, Schema.const(undefined)]) as unknown as Schema<T | undefined>

const responseSchema = Schema.object({
  text: Schema.string(),
  reasoning: Schema.string(),
  toolCalls: Schema.array(
    Schema.object({ id: Schema.string(), name: Schema.string().required(), arguments: Schema.any() }),
  ),
  usage: optional(
    Schema.object({
      input: Schema.natural(),
      output: Schema.natural(),
      cacheRead: Schema.natural(),
      cacheWrite: Schema.natural(),
    }),
  ),
  finish: Schema.union(['stop', 'tool-calls', 'max-tokens', 'aborted', 'error'] as const),
  error: optional(
    Schema.object({
      code: Schema.union(LLM_ERROR_CODES).required(),
      message: Schema.string(),
      retryAfterMs: Schema.natural(),
    }),
  ),
  hang: Schema.boolean(),
  pieces: Schema.natural().min(1),
  delayMs: Schema.natural(),
})

function split(text: string, pieces: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / pieces))
  const out: string[] = []
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size))
  return out
}

const wait = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms)
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true })
  })

/**
 * The scripted model (test support). Each request takes the next response of the script (config `script`
 * plus whatever a test `enqueue`s); an exhausted script is a loud error, never an invented answer.
 */
export default class ScriptedLlm extends Service implements LlmAdapter {
  static inject = ['llm']
  static Config = Schema.object({
    record: Schema.boolean()
      .default(true)
      .description(
        "Keep a copy of every request in `requests` (off for benchmarks: copying is the fake model's cost, not the harness's).",
      ),
    provider: Schema.string().default('scripted').description('Provider name routes use to reach this adapter.'),
    models: Schema.array(
      Schema.object({
        id: Schema.string().required(),
        contextWindow: Schema.natural().default(128_000),
        images: Schema.boolean().default(false),
      }),
    ).default([{ id: 'scripted-1', contextWindow: 128_000, images: false }]),
    script: Schema.array(responseSchema).default([]).description('Responses, in order.'),
  }) as unknown as Schema<Config>

  readonly provider: string
  readonly requests: RecordedRequest[] = []
  private served = 0
  private readonly queue: ScriptedResponse[]

  constructor(
    ctx: Context,
    private readonly config: Config,
  ) {
    super(ctx, 'scriptedLlm')
    this.provider = config.provider
    this.queue = [...config.script]
    ctx.llm.register(ctx, this)
  }

  enqueue(...responses: ScriptedResponse[]): void {
    this.queue.push(...responses)
  }

  get remaining(): number {
    return this.queue.length
  }

  models(): ModelInfo[] {
    return this.config.models.map((model) => this.describe(model.id))
  }

  describe(model: string): ModelInfo {
    const known = this.config.models.find((entry) => entry.id === model)
    return {
      id: model,
      contextWindow: known?.contextWindow ?? 128_000,
      images: known?.images ?? false,
      reasoning: true,
    }
  }

  async *stream(request: LlmRequest): AsyncIterable<StreamChunk> {
    const { signal, ...recorded } = request
    this.served++
    if (this.config.record) this.requests.push(structuredClone(recorded))
    const response = this.queue.shift()
    if (!response) {
      yield {
        type: 'finish',
        reason: 'error',
        error: { code: 'INVALID_REQUEST', message: `llm-scripted: the script is exhausted at request #${this.served}` },
      }
      return
    }
    if (request.toolChoice === 'none' && response.toolCalls?.length) {
      // A provider honouring 'none' cannot answer with calls: a script that does tests nothing real, so say so.
      const names = response.toolCalls.map((call) => call.name).join(', ')
      yield {
        type: 'finish',
        reason: 'error',
        error: {
          code: 'INVALID_REQUEST',
          message: `llm-scripted: request #${this.served} has toolChoice 'none' but its scripted response calls tools (${names})`,
        },
      }
      return
    }
    const pieces = response.pieces ?? 2
    const pause = async () => {
      if (response.delayMs) await wait(response.delayMs, signal)
    }
    for (const text of split(response.reasoning ?? '', pieces)) {
      await pause()
      if (signal.aborted) return yield { type: 'finish', reason: 'aborted' }
      yield { type: 'reasoning-delta', text }
    }
    for (const text of split(response.text ?? '', pieces)) {
      await pause()
      if (signal.aborted) return yield { type: 'finish', reason: 'aborted' }
      yield { type: 'text-delta', text }
    }
    if (response.hang) {
      await new Promise<void>((resolve) =>
        signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true }),
      )
      return yield { type: 'finish', reason: 'aborted' }
    }
    if (response.error) {
      const { code, message = `scripted ${code}`, retryAfterMs } = response.error
      return yield {
        type: 'finish',
        reason: 'error',
        error: { code, message, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) },
      }
    }
    const calls = response.toolCalls ?? []
    for (const [index, call] of calls.entries()) {
      const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {})
      yield { type: 'tool-call-delta', index, callId: call.id ?? `call_${this.served}_${index}`, name: call.name }
      for (const piece of split(args, 2)) yield { type: 'tool-call-delta', index, argumentsDelta: piece }
    }
    const usage: Usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, ...response.usage }
    yield { type: 'finish', reason: response.finish ?? (calls.length ? 'tool-calls' : 'stop'), usage }
  }
}
