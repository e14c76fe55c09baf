import { LlmError, type FinishReason, type StreamChunk, type Usage } from '@dsh/llm'

const STOP: Record<string, FinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  tool_use: 'tool-calls',
  max_tokens: 'max-tokens',
  model_context_window_exceeded: 'max-tokens',
}

/**
 * Turns Anthropic's stream events into stream chunks. Usage arrives in parts (the input side in
 * `message_start`, the running output count in `message_delta`); Anthropic's counts are already disjoint.
 */
export class EventReader {
  private usage: Usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }
  private stopReason: string | undefined
  private stopped = false

  private takeUsage(usage: any) {
    if (!usage) return
    const pick = (value: unknown, fallback: number) => (typeof value === 'number' ? value : fallback)
    this.usage = {
      input: pick(usage.input_tokens, this.usage.input),
      output: pick(usage.output_tokens, this.usage.output),
      cacheRead: pick(usage.cache_read_input_tokens, this.usage.cacheRead),
      cacheWrite: pick(usage.cache_creation_input_tokens, this.usage.cacheWrite),
    }
  }

  read(event: any): StreamChunk[] {
    switch (event?.type) {
      case 'message_start':
        this.takeUsage(event.message?.usage)
        return []
      case 'content_block_start': {
        const block = event.content_block ?? {}
        if (block.type === 'tool_use')
          return [{ type: 'tool-call-delta', index: event.index, callId: block.id, name: block.name }]
        if (block.type === 'redacted_thinking') return [{ type: 'reasoning-delta', text: '', redacted: block.data }]
        if (block.type === 'text' && block.text) return [{ type: 'text-delta', text: block.text }]
        if (block.type === 'thinking' && block.thinking) return [{ type: 'reasoning-delta', text: block.thinking }]
        return []
      }
      case 'content_block_delta': {
        const delta = event.delta ?? {}
        if (delta.type === 'text_delta') return delta.text ? [{ type: 'text-delta', text: delta.text }] : []
        if (delta.type === 'thinking_delta')
          return delta.thinking ? [{ type: 'reasoning-delta', text: delta.thinking }] : []
        if (delta.type === 'signature_delta') return [{ type: 'reasoning-delta', text: '', signature: delta.signature }]
        if (delta.type === 'input_json_delta')
          return delta.partial_json
            ? [{ type: 'tool-call-delta', index: event.index, argumentsDelta: delta.partial_json }]
            : []
        return []
      }
      case 'message_delta':
        this.takeUsage(event.usage)
        if (event.delta?.stop_reason) this.stopReason = event.delta.stop_reason
        return []
      case 'message_stop':
        this.stopped = true
        return []
      default:
        return []
    }
  }

  /** The one `finish`, once the stream is over. */
  finish(): StreamChunk {
    if (!this.stopped || !this.stopReason)
      throw new LlmError('TRANSPORT', 'the stream ended before the model said it had finished')
    const usage = { ...this.usage }
    const mapped = STOP[this.stopReason]
    if (mapped) return { type: 'finish', reason: mapped, usage }
    const message =
      this.stopReason === 'refusal'
        ? 'the model declined to answer (stop_reason "refusal")'
        : `the model stopped with stop_reason "${this.stopReason}"`
    return { type: 'finish', reason: 'error', usage, error: { code: 'INVALID_REQUEST', message } }
  }
}
