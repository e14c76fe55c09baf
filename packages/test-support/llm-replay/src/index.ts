import { readFileSync } from 'node:fs'
import type { Context } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type { LlmAdapter, LlmRequest, ModelInfo, StreamChunk } from '@dsh/llm'
import type { SessionEvent, SessionEventMap } from '@dsh/session'

export interface Config {
  provider: string
  /** A stored session to replay (read through ctx.sessions). */
  sessionId?: string
  /** Or a session.jsonl file. */
  file?: string
  contextWindow: number
}

type Recorded = { message: SessionEventMap['assistant/message']; chunks: SessionEventMap['assistant/chunk'][] }

/** Turns one recorded answer back into the chunks that produced it: the logged deltas, exactly as they came. */
export function* chunksOf({ message, chunks }: Recorded): Generator<StreamChunk> {
  for (const chunk of chunks)
    yield chunk.kind === 'text'
      ? { type: 'text-delta', text: chunk.text }
      : { type: 'reasoning-delta', text: chunk.text }
  const signature = message.content.find((block) => block.type === 'reasoning' && block.signature)
  if (signature?.type === 'reasoning') yield { type: 'reasoning-delta', text: '', signature: signature.signature! }
  let index = 0
  for (const block of message.content) {
    if (block.type !== 'tool-call') continue
    const args = typeof block.arguments === 'string' ? block.arguments : JSON.stringify(block.arguments)
    yield { type: 'tool-call-delta', index, callId: block.callId, name: block.name, argumentsDelta: args }
    index++
  }
  yield message.error
    ? { type: 'finish', reason: message.finish, error: message.error, usage: message.usage }
    : { type: 'finish', reason: message.finish, usage: message.usage }
}

export const name = 'llm-replay'
export const inject = ['llm', 'sessions']
export const Config: Schema<Config> = Schema.object({
  provider: Schema.string().default('replay').description('Provider name routes use to reach this adapter.'),
  sessionId: Schema.string().description('Stored session whose assistant messages are replayed, in order.'),
  file: Schema.string().description('A session.jsonl file to replay instead of a stored session.'),
  contextWindow: Schema.natural().default(1_000_000).description('Window reported for every model.'),
})

/**
 * Replays the answers of a stored log (each `assistant/message` with the `assistant/chunk` deltas before it),
 * one per request, in order (docs/architecture.md, "The session log": a stored
 * log as a test of the session that wrote it). Interrupted messages are skipped: they were cut, not answered.
 */
export function apply(ctx: Context, config: Config) {
  let recorded: Recorded[] | undefined
  let served = 0
  const load = async (): Promise<Recorded[]> => {
    if (recorded) return recorded
    let events: SessionEvent[]
    if (config.file)
      events = readFileSync(config.file, 'utf8')
        .trim()
        .split('\n')
        .slice(1)
        .map((line) => JSON.parse(line))
    else if (config.sessionId) events = (await ctx.sessions.read(config.sessionId)).events
    else throw new Error('llm-replay needs `sessionId` or `file` in its config')
    const answers: Recorded[] = []
    let chunks: Recorded['chunks'] = []
    for (const event of events) {
      if (event.type === 'assistant/chunk') chunks.push(event.data as Recorded['chunks'][number])
      else if (event.type === 'assistant/message') {
        const message = event.data as Recorded['message']
        if (!message.interrupted) answers.push({ message, chunks })
        chunks = []
      }
    }
    recorded = answers
    return recorded
  }
  const describe = (model: string): ModelInfo => ({
    id: model,
    contextWindow: config.contextWindow,
    images: true,
    reasoning: true,
  })
  const adapter: LlmAdapter = {
    provider: config.provider,
    models: () => [],
    describe,
    async *stream(_request: LlmRequest) {
      const messages = await load()
      const next = messages[served++]
      if (!next) {
        yield {
          type: 'finish',
          reason: 'error',
          error: {
            code: 'INVALID_REQUEST',
            message: `llm-replay: the recording has ${messages.length} answers; request #${served} has none`,
          },
        }
        return
      }
      yield* chunksOf(next)
    },
  }
  ctx.llm.register(ctx, adapter)
}
