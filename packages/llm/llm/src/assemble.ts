import {
  LlmError,
  emptyUsage,
  type FinishReason,
  type LlmErrorData,
  type ReasoningBlock,
  type StreamChunk,
  type TextBlock,
  type ToolCallBlock,
  type Usage,
} from './vocabulary.ts'

export interface AssembledMessage {
  content: (TextBlock | ReasoningBlock | ToolCallBlock)[]
  finish: FinishReason
  usage: Usage
  error?: LlmErrorData
}

/**
 * Folds a chunk stream into the assistant message it describes: consecutive text and reasoning deltas join
 * into blocks, tool-call deltas join by index, arguments are parsed as JSON (kept raw when invalid).
 */
export class BlockAssembler {
  private blocks: (
    | TextBlock
    | ReasoningBlock
    | { type: 'tool-call-pending'; index: number; callId: string; name: string; args: string }
  )[] = []
  private usage: Usage = emptyUsage()
  private finished: { reason: FinishReason; error?: LlmErrorData } | undefined

  constructor(private readonly provider?: string) {}

  push(chunk: StreamChunk): void {
    if (this.finished) throw new LlmError('INVALID_REQUEST', `stream protocol violated: ${chunk.type} after finish`)
    const last = this.blocks.at(-1)
    switch (chunk.type) {
      case 'text-delta':
        if (last?.type === 'text') last.text += chunk.text
        else this.blocks.push({ type: 'text', text: chunk.text })
        break
      case 'reasoning-delta': {
        let block = last?.type === 'reasoning' ? last : undefined
        if (!block) {
          block = { type: 'reasoning', text: '' }
          if (this.provider) block.provider = this.provider
          this.blocks.push(block)
        }
        block.text += chunk.text
        if (chunk.signature) block.signature = (block.signature ?? '') + chunk.signature
        if (chunk.redacted) block.redacted = (block.redacted ?? '') + chunk.redacted
        break
      }
      case 'tool-call-delta': {
        let call = this.blocks.find(
          (b): b is Extract<typeof b, { type: 'tool-call-pending' }> =>
            b.type === 'tool-call-pending' && b.index === chunk.index,
        )
        if (!call) {
          call = { type: 'tool-call-pending', index: chunk.index, callId: '', name: '', args: '' }
          this.blocks.push(call)
        }
        if (chunk.callId) call.callId = chunk.callId
        if (chunk.name) call.name += chunk.name
        if (chunk.argumentsDelta) call.args += chunk.argumentsDelta
        break
      }
      case 'usage':
        this.usage = {
          ...this.usage,
          ...Object.fromEntries(Object.entries(chunk.usage).filter(([, v]) => v !== undefined)),
        }
        break
      case 'finish':
        this.finished = chunk.error ? { reason: chunk.reason, error: chunk.error } : { reason: chunk.reason }
        if (chunk.usage) this.usage = chunk.usage
        break
    }
  }

  /** Text so far (for a cut stream). */
  get partialText(): string {
    return this.blocks.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('')
  }

  get isFinished(): boolean {
    return this.finished !== undefined
  }

  /** The message; an unfinished stream is reported as `aborted` with whatever arrived. */
  result(): AssembledMessage {
    const content = this.blocks.map((block, position) => {
      if (block.type !== 'tool-call-pending') return block
      const call: ToolCallBlock = {
        type: 'tool-call',
        callId: block.callId || `call_${position}`,
        name: block.name,
        arguments: parseArguments(block.args),
      }
      return call
    })
    const out: AssembledMessage = { content, finish: this.finished?.reason ?? 'aborted', usage: this.usage }
    if (this.finished?.error) out.error = this.finished.error
    return out
  }
}

function parseArguments(raw: string): unknown {
  if (raw.trim() === '') return {}
  try {
    return JSON.parse(raw)
  } catch {
    return raw
  }
}
