import { LlmError, type FinishReason, type StreamChunk, type Usage } from '@dsh/llm'

/** DeepSeek's usage in our disjoint terms: cache hits are cache reads, the rest of the prompt is uncached input. */
export function usageOf(usage: any): Usage {
  const prompt = Number(usage?.prompt_tokens ?? 0)
  const hit = Number(usage?.prompt_cache_hit_tokens ?? usage?.prompt_tokens_details?.cached_tokens ?? 0)
  return { input: Math.max(0, prompt - hit), output: Number(usage?.completion_tokens ?? 0), cacheRead: hit, cacheWrite: 0 }
}

const FINISH: Record<string, FinishReason> = { stop: 'stop', tool_calls: 'tool-calls', length: 'max-tokens' }

/**
 * Turns `chat.completion.chunk` objects into stream chunks. The finish is held back until the stream ends,
 * because usage may ride on the finish chunk (DeepSeek) or follow it in a chunk of its own.
 */
export class ChunkReader {
  private finishReason: string | undefined
  private usage: Usage | undefined
  private calls = 0

  read(chunk: any): StreamChunk[] {
    const out: StreamChunk[] = []
    if (chunk?.usage) this.usage = usageOf(chunk.usage)
    const choice = chunk?.choices?.[0]
    if (!choice) return out
    const delta = choice.delta ?? {}
    if (typeof delta.reasoning_content === 'string' && delta.reasoning_content) out.push({ type: 'reasoning-delta', text: delta.reasoning_content })
    if (typeof delta.content === 'string' && delta.content) out.push({ type: 'text-delta', text: delta.content })
    for (const call of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
      const piece: Extract<StreamChunk, { type: 'tool-call-delta' }> = { type: 'tool-call-delta', index: Number(call.index ?? 0) }
      if (call.id) piece.callId = call.id
      if (call.function?.name) piece.name = call.function.name
      if (call.function?.arguments) piece.argumentsDelta = call.function.arguments
      this.calls++
      out.push(piece)
    }
    if (choice.finish_reason) this.finishReason = choice.finish_reason
    return out
  }

  /** The one `finish`, once the stream is over. */
  finish(): StreamChunk {
    const usage = this.usage
    const reason = this.finishReason
    if (!reason) throw new LlmError('TRANSPORT', 'the stream ended before the model said it had finished')
    let mapped = FINISH[reason]
    // Some servers say `stop` after tool calls; the calls are what the turn must act on.
    if (mapped === 'stop' && this.calls) mapped = 'tool-calls'
    if (mapped) return { type: 'finish', reason: mapped, ...(usage ? { usage } : {}) }
    const code = reason === 'insufficient_system_resource' ? 'SERVER' : 'INVALID_REQUEST'
    return { type: 'finish', reason: 'error', ...(usage ? { usage } : {}), error: { code, message: `the model stopped with finish_reason "${reason}"` } }
  }
}
