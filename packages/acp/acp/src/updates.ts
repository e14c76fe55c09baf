import type {
  ContentBlock,
  SessionUpdate,
  ToolCallContent,
  ToolCallLocation,
  ToolCallUpdate,
  ToolKind,
} from '@agentclientprotocol/sdk'
import type {} from '@dsh/mcp'
import type { SessionEvent } from '@dsh/session'
import { SessionView, type Block, type Item, type NoticeItem, type ToolItem, type ViewChange } from '@dsh/session-view'
import { lastTurnUsage, sessionUsage, type PriceTable } from '@dsh/usage-kit'
import { mentionBlock } from './mentions.ts'
import { locationsOf, proposedDiff, readBefore, targetPath } from './tool-calls.ts'
import { wholeFileDiff } from './whole-file.ts'

/** What the translator needs to know about tools and limits. */
export interface TranslatorOptions {
  cwd: string
  /** Kind and human title of a call (the tool's own summary where it has one). */
  describe(name: string, args: unknown): { kind: ToolKind; title: string }
  /** Largest file (either side) whose whole text a diff shows. */
  diffMaxBytes: number
  /**
   * A checkpoint's stored text by sha256 (@dsh/checkpoints): an applied edit's diff is then the whole file
   * before and after, from the log. Absent (no checkpoints row), the diff is built from the arguments.
   */
  checkpointText?(sha256: string): string | undefined
  /** The editor owns the files (fs-acp reads its buffers): the disk, which may be older, is no old side. */
  editorFiles?(): boolean
  /** Longest tool output text sent to the editor (the log keeps it whole). */
  toolOutputMaxChars: number
  /** The client presents `notice` updates (it advertised `session.notices`); else notices go as thoughts. */
  notices: boolean
  /** The session mode now (a preset, or plan mode), told to the editor when plan mode starts or ends. */
  currentMode?(): string | undefined
  /** The price table in force (`ctx.usagePrices`); absent, `usage_update` carries no cost. */
  prices?(): PriceTable
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

function cap(text: string, max: number): string {
  if (text.length <= max) return text
  return `${text.slice(0, max)}\n[… ${text.length - max} more characters in the session log]`
}

/**
 * The `_meta` key of an image block whose bytes are in the attachment store: the translator is synchronous,
 * so it names the image and `AcpSession` reads the bytes before the update is sent (`withStoredImages`).
 */
export const STORED_IMAGE = 'dsh/storedImage'

function toAcpBlock(block: Block, maxChars: number): ContentBlock | undefined {
  if (block.type === 'text') return { type: 'text', text: cap(block.text ?? '', maxChars) }
  if (block.type !== 'image') return undefined
  if (block.data && block.mediaType) return { type: 'image', mimeType: block.mediaType, data: block.data }
  if (block.sha256 && block.mediaType)
    return {
      type: 'image',
      mimeType: block.mediaType,
      data: '',
      _meta: { [STORED_IMAGE]: { sha256: block.sha256, description: block.description } },
    }
  return block.description ? { type: 'text', text: `[image: ${block.description}]` } : undefined
}

/** A `run_code` call's program, shown as its content (docs/architecture.md, "Code mode"). */
function programOf(call: ToolItem): string | undefined {
  const code = call.name === 'run_code' ? (call.args as { code?: unknown } | undefined)?.code : undefined
  return typeof code === 'string' ? `\`\`\`ts\n${code}\n\`\`\`` : undefined
}

/** The kinds `sessionUsage` reads: the route in force and the logged requests. */
const USAGE_KINDS = new Set(['request/context', 'model/route', 'assistant/message', 'compaction/end', 'turn/start'])

const chunk = (kind: 'text' | 'reasoning', text: string): SessionUpdate => ({
  sessionUpdate: kind === 'reasoning' ? 'agent_thought_chunk' : 'agent_message_chunk',
  content: { type: 'text', text },
})

/**
 * Turns one session's log events into ACP `session/update` payloads: the events are folded by the display
 * fold every surface shares (@dsh/session-view), and each change it reports becomes zero or more updates.
 * Keeps per-call state (kind, diff, terminal) between events.
 */
export class UpdateTranslator {
  private readonly view = new SessionView()
  private readonly calls = new Map<string, CallState>()
  /** The events usage is folded from (routes and requests): the cost of `usage_update` is the whole session's. */
  private readonly usageEvents: SessionEvent[] = []

  constructor(private readonly options: TranslatorOptions) {}

  /** Shows a client terminal as the output of a call (the terminal must be shown before it is released). */
  attachTerminal(callId: string, terminalId: string): SessionUpdate {
    const state = this.calls.get(callId)
    if (state) state.terminalId = terminalId
    return {
      sessionUpdate: 'tool_call_update',
      toolCallId: callId,
      content: [...(state?.diff ? [state.diff] : []), { type: 'terminal', terminalId }],
    }
  }

  /** The call as a permission request shows it: its diff (if any) and why approval is needed. */
  permissionView(callId: string, title: string, reason: string): ToolCallUpdate {
    const state = this.calls.get(callId)
    const content: ToolCallContent[] = [
      ...(state?.diff ? [state.diff] : []),
      { type: 'content', content: { type: 'text', text: reason } },
    ]
    return { toolCallId: callId, title, status: 'pending', ...(state ? { kind: state.kind } : {}), content }
  }

  translate(event: SessionEvent, mode: TranslateMode): SessionUpdate[] {
    if (USAGE_KINDS.has(event.type)) this.usageEvents.push(event)
    if (event.type === 'mcp/status') return mcpTrouble(event as SessionEvent<'mcp/status'>)
    return this.view.apply(event).flatMap((change) => this.updatesFor(change, mode))
  }

  private updatesFor(change: ViewChange, mode: TranslateMode): SessionUpdate[] {
    // The agent's task list is ACP's plan: each update sends the whole list (the protocol replaces it).
    if (change.op === 'session' && change.cause === 'todo/updated')
      return [{ sessionUpdate: 'plan', entries: (this.view.todos ?? []).map((todo) => ({ ...todo })) }]
    const current =
      change.op === 'session' && change.cause === 'plan/mode' && mode === 'live'
        ? this.options.currentMode?.()
        : undefined
    if (current) return [{ sessionUpdate: 'current_mode_update', currentModeId: current }]
    if (change.op === 'session' && change.cause === 'session/title' && this.view.title)
      return [{ sessionUpdate: 'session_info_update', title: this.view.title.title }]
    if (change.op === 'usage') return this.usageUpdate()
    if (change.op !== 'added' && change.op !== 'updated') return []
    const item: Item = change.item
    switch (item.kind) {
      case 'assistant':
        // Live, the text streams as it comes; a replay tells each answer once, as its message logged it.
        if (mode === 'live') return change.delta?.text ? [chunk(change.delta.kind, change.delta.text)] : []
        if (change.cause !== 'assistant/message') return []
        return [
          ...(item.reasoning ? [chunk('reasoning', item.reasoning)] : []),
          ...(item.text ? [chunk('text', item.text)] : []),
        ]
      case 'user':
        // Live, the editor already shows what its user typed; a replay tells it again.
        if (mode !== 'replay' || change.op !== 'added' || (item.source !== 'user' && item.source !== 'steer')) return []
        return item.content.flatMap((block) => {
          // A mention the editor sent comes back as the link it was, not as the markup the model read.
          const content =
            (block.type === 'text' && block.text !== undefined ? mentionBlock(block.text) : undefined) ??
            toAcpBlock(block, Number.MAX_SAFE_INTEGER)
          return content ? [{ sessionUpdate: 'user_message_chunk', content } as SessionUpdate] : []
        })
      case 'tool':
        return this.toolUpdates(item, change.op, change.cause, mode)
      case 'notice':
        return mode === 'live' && change.op === 'added' && item.cause === 'retry' ? [this.retrying(item)] : []
      default:
        return []
    }
  }

  /** A call the editor was told of moves through its statuses; a result whose call it never saw is not shown. */
  private toolUpdates(item: ToolItem, op: 'added' | 'updated', cause: string, mode: TranslateMode): SessionUpdate[] {
    if (op === 'added') return cause === 'tool/call' ? [this.started(item, mode)] : []
    if (!this.calls.has(item.callId)) return []
    if (cause === 'tool/dispatched')
      return [{ sessionUpdate: 'tool_call_update', toolCallId: item.callId, status: 'in_progress' }]
    if (cause === 'tool/result') return [this.finished(item)]
    if (cause === 'tool/output' && mode === 'live') return this.printing(item)
    // What the files held is shown with the result, not as a change of its own.
    if (cause === 'checkpoint/before' || cause === 'checkpoint/after') return []
    // Cut without a result (a cancel, a crash, a turn that ended first): it failed, and says why.
    if (item.status === 'interrupted') return [this.interrupted(item, cause)]
    return []
  }

  /**
   * ACP's `usage_update` after each answered request: `used` is what the last request put in the context
   * (prompt, cache reads and writes, answer), `size` the logged window, `cost` the session's USD so far when
   * every model it used has a price. The token sums ride in `_meta["dsh/usage"]` (the protocol has no field
   * for them), with the cache-hit share and what the cache saved, the session's and the last turn's (`turn`). Nothing before a window is logged: `size` is required.
   */
  private usageUpdate(): SessionUpdate[] {
    const last = this.view.lastUsage
    const size = this.view.window
    if (!last || !size) return []
    const prices = this.options.prices?.() ?? {}
    const { cost, unpriced, ...tokens } = sessionUsage(this.usageEvents, prices)
    // The turn's own figures beside the session's: the cache-hit share and its money per turn (issue #29 part 5).
    const { cacheHitShare, cacheSaved, cost: turnCost } = lastTurnUsage(this.usageEvents, prices)
    return [
      {
        sessionUpdate: 'usage_update',
        used: last.input + last.cacheRead + last.cacheWrite + last.output,
        size,
        ...(cost !== null && this.options.prices ? { cost: { amount: cost, currency: 'USD' } } : {}),
        _meta: { 'dsh/usage': { ...tokens, unpriced, turn: { cacheHitShare, cacheSaved, cost: turnCost } } },
      },
    ]
  }

  /**
   * What a running call printed so far, as its content (ACP replaces a call's content with each update, so
   * each sends the whole text, its tail when long). A call shown in a client terminal has it there already;
   * a replay tells the result alone.
   */
  private printing(item: ToolItem): SessionUpdate[] {
    const state = this.calls.get(item.callId)!
    if (state.terminalId || !item.printed || item.output !== undefined) return []
    const text = item.printed.text
    const max = this.options.toolOutputMaxChars
    const shown =
      text.length <= max
        ? text
        : `[… ${text.length - max} earlier characters in the session log]\n${text.slice(text.length - max)}`
    return [
      {
        sessionUpdate: 'tool_call_update',
        toolCallId: item.callId,
        content: [{ type: 'content', content: { type: 'text', text: `\`\`\`\n${shown}\n\`\`\`` } }],
      },
    ]
  }

  /**
   * A failed model request will be tried again: said at once, or the editor shows nothing for the whole
   * wait. A `notice` where the client presents them (the error as its description), else a thought chunk
   * on lines of its own (thoughts are live text the editor already shows while the model works).
   */
  private retrying(notice: NoticeItem): SessionUpdate {
    const failure = notice.retry?.failure
    if (this.options.notices)
      return {
        sessionUpdate: 'notice',
        severity: 'warning',
        title: notice.text,
        ...(failure ? { description: failure.message } : {}),
      }
    return { sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: `\n\n${notice.text}\n\n` } }
  }

  private started(call: ToolItem, mode: TranslateMode): SessionUpdate {
    const { kind, title } = this.options.describe(call.name, call.args)
    const locations: ToolCallLocation[] = locationsOf(call.args, this.options.cwd)
    let diff: CallState['diff']
    if (kind === 'edit') {
      const path = targetPath(call.args, this.options.cwd)
      // Live, the call has not run yet, so the file on disk is the old side, unless the editor holds the file
      // (its buffer may differ from the disk: the result's diff comes from what the tool read); a replay
      // cannot know it before the call's checkpoints.
      const fromDisk = mode === 'live' && !this.options.editorFiles?.()
      const before = fromDisk && path && call.change ? readBefore(path, this.options.diffMaxBytes) : undefined
      diff = proposedDiff(call.change, this.options.cwd, before)
    }
    this.calls.set(call.callId, { kind, diff })
    const program = programOf(call)
    return {
      sessionUpdate: 'tool_call',
      toolCallId: call.callId,
      // A call a program made (code mode) names the run_code call it came from.
      title: call.parentCallId ? `↳ ${title} (from ${call.parentCallId})` : title,
      kind,
      status: 'pending',
      locations,
      content: [
        ...(diff ? [diff] : []),
        ...(program ? [{ type: 'content' as const, content: { type: 'text' as const, text: program } }] : []),
      ],
      rawInput: call.args,
      ...(call.parentCallId ? { _meta: { dsh: { parentCallId: call.parentCallId } } } : {}),
    }
  }

  private interrupted(item: ToolItem, cause: string): SessionUpdate {
    const state = this.calls.get(item.callId)!
    const reason =
      item.error?.message ??
      (cause === 'turn/ended'
        ? 'the turn ended (cancelled or failed) before the call finished'
        : 'the session stopped before the call finished')
    const content: ToolCallContent[] = [
      ...(state.terminalId ? [{ type: 'terminal' as const, terminalId: state.terminalId }] : []),
      { type: 'content', content: { type: 'text', text: `Interrupted: ${reason}` } },
    ]
    return { sessionUpdate: 'tool_call_update', toolCallId: item.callId, status: 'failed', content }
  }

  private finished(result: ToolItem): SessionUpdate {
    const state = this.calls.get(result.callId)!
    const blocks = result.content ?? []
    const content: ToolCallContent[] = []
    // `rawOutput` repeats nothing `content` shows: it carries the output only when the editor would not
    // otherwise have all of it (a terminal shows it instead, or a block was shortened), and the error only
    // when no content block states it.
    let shortened = false
    if (state.terminalId) {
      content.push({ type: 'terminal', terminalId: state.terminalId })
      // The terminal shows the output, not why the call failed (a cancel, a timeout).
      if (result.error) content.push({ type: 'content', content: { type: 'text', text: result.error.message } })
    } else {
      // A refused or failed edit changed nothing: its diff would mislead. An applied one (an insert too, which
      // has no diff before it runs) is shown on the whole file as its checkpoints recorded it, when they did
      // and it fits.
      const path = result.change ? targetPath(result.args, this.options.cwd) : undefined
      if (path && state.kind === 'edit' && result.changeState === 'applied') {
        const text = this.options.checkpointText
        const shown = wholeFileDiff(
          result,
          path,
          state.diff,
          text ? { maxBytes: this.options.diffMaxBytes, text } : undefined,
        )
        state.diff = shown.diff
        if (shown.diff) content.push(shown.diff)
        if (shown.note) content.push({ type: 'content', content: { type: 'text', text: shown.note } })
      }
      for (const block of blocks) {
        const acp = toAcpBlock(block, this.options.toolOutputMaxChars)
        if (!acp) continue
        if (block.type === 'text' && (block.text?.length ?? 0) > this.options.toolOutputMaxChars) shortened = true
        // Command output reads best as a preformatted block.
        const shown =
          acp.type === 'text' && state.kind === 'execute' && !result.error
            ? { type: 'text' as const, text: `\`\`\`\n${acp.text}\n\`\`\`` }
            : acp
        content.push({ type: 'content', content: shown })
      }
    }
    return {
      sessionUpdate: 'tool_call_update',
      toolCallId: result.callId,
      // The display fold's status: an error, an unclean command exit and an interrupted call all failed.
      status: result.status === 'done' ? 'completed' : 'failed',
      content,
      ...(result.error && !state.terminalId && !(result.output ?? '').includes(result.error.message)
        ? { rawOutput: { error: result.error } }
        : {}),
      ...(!result.error && (shortened || state.terminalId)
        ? { rawOutput: { content: blocks.filter((block) => block.type === 'text') } }
        : {}),
    }
  }
}

const MCP_TROUBLE: Partial<Record<string, string>> = {
  failed: 'did not start',
  crashed: 'stopped unexpectedly',
  refused: 'was refused',
}

/**
 * An MCP server that failed, crashed or was refused (issue #36.10): the editor is told as a failed call of its
 * own, naming the server and the cause, since ACP has no notice update and an agent message chunk would read
 * as the model's words. A server that started or stopped as asked is not news to the editor.
 */
function mcpTrouble(event: SessionEvent<'mcp/status'>): SessionUpdate[] {
  const { server, state, message } = event.data
  const what = MCP_TROUBLE[state]
  if (!what) return []
  return [
    {
      sessionUpdate: 'tool_call',
      toolCallId: `dsh-mcp-${server}-${event.seq}`,
      title: `MCP server "${server}" ${what}`,
      kind: 'other',
      status: 'failed',
      content: [{ type: 'content', content: { type: 'text', text: message ?? `no cause was given (${state})` } }],
      _meta: { 'dsh/mcp': { server, state } },
    },
  ]
}
