import { LlmError, type FinishReason, type StreamChunk, type Usage } from '@dsh/llm'

// The OpenAI chat-completions stream family (DeepSeek, OpenAI, and every compatible server: Ollama, vLLM, …):
// one reader for the shared wire, so each adapter keeps only what differs (its request body).

/**
 * Chat-completions usage in our disjoint terms: cache hits (DeepSeek's or OpenAI's field) are cache reads;
 * `completion_tokens_details.reasoning_tokens`, when the server sends it, is the reasoning part of the output.
 */
export function chatUsage(usage: any): Usage {
  const prompt = Number(usage?.prompt_tokens ?? 0)
  const hit = Number(usage?.prompt_cache_hit_tokens ?? usage?.prompt_tokens_details?.cached_tokens ?? 0)
  const reasoning = usage?.completion_tokens_details?.reasoning_tokens
  return {
    input: Math.max(0, prompt - hit),
    output: Number(usage?.completion_tokens ?? 0),
    cacheRead: hit,
    cacheWrite: 0,
    ...(Number.isFinite(reasoning) ? { reasoning: Number(reasoning) } : {}),
  }
}

const FINISH: Record<string, FinishReason> = {
  stop: 'stop',
  tool_calls: 'tool-calls',
  function_call: 'tool-calls',
  length: 'max-tokens',
}

/** Finish reasons that mean the provider failed, not the request (DeepSeek's overloaded signal). */
const SERVER_FINISH = new Set(['insufficient_system_resource'])

/**
 * Turns `chat.completion.chunk` objects into stream chunks. The finish waits for the end of the stream,
 * because usage rides on the finish chunk (DeepSeek) or follows it in a chunk of its own (OpenAI with
 * `include_usage`). Reasoning arrives as `reasoning_content` (DeepSeek, most servers) or `reasoning`.
 */
export class ChatCompletionsReader {
  private finishReason: string | undefined
  private usage: Usage | undefined
  private calls = 0

  read(chunk: any): StreamChunk[] {
    const out: StreamChunk[] = []
    if (chunk?.usage) this.usage = chatUsage(chunk.usage)
    const choice = chunk?.choices?.[0]
    if (!choice) return out
    const delta = choice.delta ?? {}
    const reasoning = delta.reasoning_content ?? delta.reasoning
    if (typeof reasoning === 'string' && reasoning) out.push({ type: 'reasoning-delta', text: reasoning })
    if (typeof delta.content === 'string' && delta.content) out.push({ type: 'text-delta', text: delta.content })
    for (const call of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
      const piece: Extract<StreamChunk, { type: 'tool-call-delta' }> = {
        type: 'tool-call-delta',
        index: Number(call.index ?? 0),
      }
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
    // Some servers (Ollama) say `stop` after tool calls; the calls are what the turn must act on.
    if (mapped === 'stop' && this.calls) mapped = 'tool-calls'
    if (mapped) return { type: 'finish', reason: mapped, ...(usage ? { usage } : {}) }
    const code = SERVER_FINISH.has(reason) ? 'SERVER' : 'INVALID_REQUEST'
    return {
      type: 'finish',
      reason: 'error',
      ...(usage ? { usage } : {}),
      error: { code, message: `the model stopped with finish_reason "${reason}"` },
    }
  }
}
