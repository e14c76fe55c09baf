import type { ContentBlock, SessionUpdate, ToolCallContent, ToolCallLocation, ToolCallUpdate, ToolKind } from '@agentclientprotocol/sdk'
import type { ImageBlock, TextBlock } from '@dsh/llm'
import type { AnySessionEvent, SessionEvent } from '@dsh/session'
import { locationsOf, proposedDiff, readBefore, targetPath } from './tool-calls.ts'

/** What the translator needs to know about tools and limits. */
export interface TranslatorOptions {
  cwd: string
  /** Kind and human title of a call (the tool's own summary where it has one). */
  describe(name: string, args: unknown): { kind: ToolKind; title: string }
  /** Largest file read for the old side of a diff. */
  diffMaxBytes: number
  /** Longest tool output text sent to the editor (the log keeps it whole). */
  toolOutputMaxChars: number
  /** The client presents `notice` updates (it advertised `session.notices`); else notices go as thoughts. */
  notices: boolean
}

interface CallState {
  kind: ToolKind
  diff?: Extract<ToolCallContent, { type: 'diff' }>
  /** A client terminal showing the call's output (set by a terminal-backed shell). */
  terminalId?: string
}

/**
 * Live: updates are made as the log grows (chunks stream, tool calls move through their statuses). Replay:
 * a stored session is told again from its messages, so the editor shows the conversation it had.
 */
export type TranslateMode = 'live' | 'replay'

/** `llm/retry` data (see @dsh/llm-retry); logs written before `maxRetries` existed lack it. */
interface RetryData {
  attempt?: unknown
  maxRetries?: unknown
  code?: unknown
  delayMs?: unknown
  reason?: unknown
}

/** `Model request failed (SERVER); retrying in 2 s — retry 1 of 4`. */
export function retryText(data: RetryData): string {
  const code = typeof data.code === 'string' && data.code ? ` (${data.code})` : ''
  const delay = typeof data.delayMs === 'number' ? ` in ${waitText(data.delayMs)}` : ''
  const total = typeof data.maxRetries === 'number' ? ` of ${data.maxRetries}` : ''
  const which = typeof data.attempt === 'number' ? ` — retry ${data.attempt}${total}` : ''
  return `Model request failed${code}; retrying${delay}${which}`
}

function waitText(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`
  const seconds = Math.round(ms / 100) / 10
  return `${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)} s`
}

function cap(text: string, max: number): string {
  if (text.length <= max) return text
  return `${text.slice(0, max)}\n[… ${text.length - max} more characters in the session log]`
}

function toAcpBlock(block: TextBlock | ImageBlock, maxChars: number): ContentBlock | undefined {
  if (block.type === 'text') return { type: 'text', text: cap(block.text, maxChars) }
  if (block.data) return { type: 'image', mimeType: block.mediaType, data: block.data }
  return block.description ? { type: 'text', text: `[image: ${block.description}]` } : undefined
}

/** Turns one session's log events into ACP `session/update` payloads. Keeps per-call state between events. */
export class UpdateTranslator {
  private readonly calls = new Map<string, CallState>()
  /** The error of the last failed model request, for the retry notice that follows it. */
  private lastFailure: { code: string; message: string } | undefined

  constructor(private readonly options: TranslatorOptions) {}

  /** Shows a client terminal as the output of a call (the terminal must be shown before it is released). */
  attachTerminal(callId: string, terminalId: string): SessionUpdate {
    const state = this.calls.get(callId)
    if (state) state.terminalId = terminalId
    return { sessionUpdate: 'tool_call_update', toolCallId: callId, content: [...(state?.diff ? [state.diff] : []), { type: 'terminal', terminalId }] }
  }

  /** The call as a permission request shows it: its diff (if any) and why approval is needed. */
  permissionView(callId: string, title: string, reason: string): ToolCallUpdate {
    const state = this.calls.get(callId)
    const content: ToolCallContent[] = [...(state?.diff ? [state.diff] : []), { type: 'content', content: { type: 'text', text: reason } }]
    return { toolCallId: callId, title, status: 'pending', ...(state ? { kind: state.kind } : {}), content }
  }

  translate(event: SessionEvent, mode: TranslateMode): SessionUpdate[] {
    // Declared by @dsh/llm-retry (a plugin this package may not depend on): read by its documented shape.
    if ((event.type as string) === 'llm/retry') return mode === 'live' ? [this.retrying(event.data as RetryData)] : []
    const e = event as AnySessionEvent
    if (e.type === 'assistant/message') this.lastFailure = e.data.error
    switch (e.type) {
      case 'assistant/chunk':
        if (mode !== 'live' || !e.data.text) return []
        return [{ sessionUpdate: e.data.kind === 'reasoning' ? 'agent_thought_chunk' : 'agent_message_chunk', content: { type: 'text', text: e.data.text } }]
      case 'assistant/message':
        if (mode !== 'replay') return []
        return e.data.content.flatMap((block): SessionUpdate[] => {
          if (block.type === 'text' && block.text) return [{ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: block.text } }]
          if (block.type === 'reasoning' && block.text) return [{ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: block.text } }]
          return []
        })
      case 'user/message':
        // Live, the editor already shows what its user typed; a replay tells it again.
        if (mode !== 'replay' || (e.data.source !== 'user' && e.data.source !== 'steer')) return []
        return e.data.content.flatMap((block) => {
          const content = toAcpBlock(block, Number.MAX_SAFE_INTEGER)
          return content ? [{ sessionUpdate: 'user_message_chunk', content } as SessionUpdate] : []
        })
      case 'tool/call':
        return [this.started(e.data, mode)]
      case 'tool/dispatched':
        return this.calls.has(e.data.callId) ? [{ sessionUpdate: 'tool_call_update', toolCallId: e.data.callId, status: 'in_progress' }] : []
      case 'tool/result':
        return this.calls.has(e.data.callId) ? [this.finished(e.data)] : []
      default:
        return []
    }
  }

  /**
   * A failed model request will be tried again: said at once, or the editor shows nothing for the whole
   * wait. A `notice` where the client presents them (the error as its description), else a thought chunk
   * on lines of its own (thoughts are live text the editor already shows while the model works).
   */
  private retrying(data: RetryData): SessionUpdate {
    const title = retryText(data)
    if (this.options.notices) return { sessionUpdate: 'notice', severity: 'warning', title, ...(this.lastFailure ? { description: this.lastFailure.message } : {}) }
    return { sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: `\n\n${title}\n\n` } }
  }

  private started(call: { callId: string; name: string; arguments: unknown }, mode: TranslateMode): SessionUpdate {
    const { kind, title } = this.options.describe(call.name, call.arguments)
    const locations: ToolCallLocation[] = locationsOf(call.arguments, this.options.cwd)
    let diff: CallState['diff']
    if (kind === 'edit') {
      const path = targetPath(call.arguments, this.options.cwd)
      // Live, the call has not run yet, so the file on disk is the old side; a replay cannot know it.
      const before = mode === 'live' && path ? readBefore(path, this.options.diffMaxBytes) : undefined
      diff = proposedDiff(call.arguments, this.options.cwd, before)
    }
    this.calls.set(call.callId, { kind, diff })
    return {
      sessionUpdate: 'tool_call',
      toolCallId: call.callId,
      title,
      kind,
      status: 'pending',
      locations,
      content: diff ? [diff] : [],
      rawInput: call.arguments,
    }
  }

  private finished(result: { callId: string; content: (TextBlock | ImageBlock)[]; error?: { code: string; message: string } }): SessionUpdate {
    const state = this.calls.get(result.callId)!
    const content: ToolCallContent[] = []
    if (state.terminalId) content.push({ type: 'terminal', terminalId: state.terminalId })
    else {
      // A failed edit changed nothing: its diff would mislead.
      if (state.diff && !result.error) content.push(state.diff)
      for (const block of result.content) {
        const acp = toAcpBlock(block, this.options.toolOutputMaxChars)
        if (!acp) continue
        // Command output reads best as a preformatted block.
        const shown = acp.type === 'text' && state.kind === 'execute' && !result.error ? { type: 'text' as const, text: `\`\`\`\n${acp.text}\n\`\`\`` } : acp
        content.push({ type: 'content', content: shown })
      }
    }
    return {
      sessionUpdate: 'tool_call_update',
      toolCallId: result.callId,
      status: result.error ? 'failed' : 'completed',
      content,
      rawOutput: result.error ? { error: result.error } : { content: result.content.filter((block) => block.type === 'text') },
    }
  }
}
