import type {
  ApprovalInfo,
  AssistantItem,
  Block,
  ChangeState,
  ErrorInfo,
  FileSnapshot,
  FileTouch,
  ImageRef,
  Item,
  LogEvent,
  NoticeItem,
  TodoEntry,
  ToolItem,
  Usage,
  ViewChange,
} from './items.ts'
import { proposedChange } from './change.ts'
import { retryInfoOf, retryText } from './retry.ts'
import { commandEnding } from './ending.ts'

const ZERO: Usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }

/** Kinds a display has nothing to show for: applied knowingly, not counted as skipped. */
/** Decisions of a `hook/run` that a person should see (the others passed, allowed or added context). */
const HOOK_SHOWN = new Set(['block', 'deny', 'ask', 'stop', 'error'])
const UNSHOWN = new Set([
  'job/started',
  'step/end',
  'request/header',
  'inbox/spliced',
  'agent/system-prompt',
  'sandbox/probe',
  'fs/observed',
  'compaction/start',
])

const textOf = (blocks: readonly Block[] | undefined, type: string) =>
  (blocks ?? [])
    .filter((block) => block.type === type && block.text)
    .map((block) => block.text)
    .join('')

const addUsage = (a: Usage, b: Partial<Usage> | undefined): Usage => ({
  input: a.input + (b?.input ?? 0),
  output: a.output + (b?.output ?? 0),
  cacheRead: a.cacheRead + (b?.cacheRead ?? 0),
  cacheWrite: a.cacheWrite + (b?.cacheWrite ?? 0),
  // Reported by some providers only: absent stays absent (not 0).
  ...(a.reasoning !== undefined || b?.reasoning !== undefined
    ? { reasoning: (a.reasoning ?? 0) + (b?.reasoning ?? 0) }
    : {}),
})

const routeText = (route: { provider: string; model: string; effort?: string }) =>
  `${route.provider}/${route.model}${route.effort ? ` · ${route.effort} effort` : ''}`

/** How a background job ended, in words (`job/ended`). */
function jobEnding(data: { reason?: string; exitCode?: number | null; signal?: string | null }): string {
  if (data.reason === 'killed') return 'was stopped'
  if (data.reason === 'session-ended') return 'was stopped with its session'
  return data.signal ? `ended by ${data.signal}` : `exited with code ${data.exitCode}`
}

/** Tools whose output ends with the command notes (`[Exit code 1]`): their status follows the exit code. */
const COMMAND_TOOLS = new Set(['bash'])
/** Result codes of a call that was cut rather than failed: it shows as interrupted. */
const INTERRUPTED_CODES = new Set(['ABORTED', 'ABORTED_BEFORE_DISPATCH', 'TOOL_NOT_STARTED', 'TOOL_OUTCOME_UNKNOWN'])
/** Of those, the codes of a call that never started: its proposed change did not happen. */
const NOT_STARTED_CODES = new Set(['ABORTED_BEFORE_DISPATCH', 'TOOL_NOT_STARTED'])

const count = (list: unknown, what: string) => (Array.isArray(list) && list.length ? `${list.length} ${what}` : '')

/** A rewind (`rewind/done` of @dsh/checkpoints) in words: what was restored, left and skipped. */
function rewindText(data: any): string {
  const parts = [
    count(data.restored, 'restored') || 'nothing to restore',
    count(data.conflicts, 'changed since by someone else and left as is'),
    count(data.skipped, 'skipped'),
  ].filter(Boolean)
  return `Files rewound to their state before turn ${data.toTurn}: ${parts.join(', ')}${data.forkedTo ? `; the conversation was forked (${data.forkedTo})` : ''}.`
}

/** A checkpoint's file state by shape (`{ sha256, bytes }`, `{ absent }`, `{ unrecorded }`); anything else is no state. */
function snapshotOf(state: any): FileSnapshot | undefined {
  if (!state || typeof state !== 'object') return undefined
  if (typeof state.sha256 === 'string' && typeof state.bytes === 'number')
    return { sha256: state.sha256, bytes: state.bytes }
  if (state.absent === true) return { absent: true }
  return typeof state.unrecorded === 'string' ? { unrecorded: state.unrecorded } : undefined
}

const sameError = (a: ErrorInfo | undefined, b: ErrorInfo | undefined) =>
  !!a && !!b && a.code === b.code && a.message === b.message

/**
 * The display fold of one session's log (docs/architecture.md, "Surfaces: one display fold"). Events are
 * applied one at a time in seq order, perhaps starting mid-log (a page); each `apply` costs O(1) and says
 * what it changed. Kinds it does not know are counted in `skipped`, never thrown on; a result whose call is
 * on an earlier, unloaded page shows on its own.
 */
export class SessionView {
  readonly items: Item[] = []
  /** A turn started and has not ended in the applied events. */
  openTurn = false
  /** The last logged window and usage, for a context meter. */
  window: number | undefined
  lastUsage: Usage | undefined
  route: { provider: string; model: string; effort?: string } | undefined
  preset: string | undefined
  /** The agent's task list as its last `todo/updated` wrote it (undefined before any). */
  todos: TodoEntry[] | undefined
  /** The session is in plan mode (its last `plan/mode`). */
  planMode = false
  /** The session's name (`session/title`): a user's title is never replaced by a model's. */
  title: { title: string; source: 'user' | 'model' } | undefined
  /** The agent preset the session was created with (its `agent/preset`; undefined: standard). */
  agentPreset: string | undefined
  /** Events applied, and those of kinds this view does not know, by kind. */
  applied = 0
  readonly skipped = new Map<string, number>()

  private readonly positions = new Map<string, number>()
  private readonly toolKeys = new Map<string, string>()
  private readonly resultCalls = new Map<number, string>()
  private readonly waiting = new Map<string, { approval: ApprovalInfo; key: string }>()
  /** Tool cards without a result yet: a turn's end (or `settle`) shows them interrupted. */
  private readonly openCalls = new Set<string>()
  private lastSeq = -1
  /** What each checkpointed file was last recorded as: the old side of a later call in the same turn. */
  private readonly lastSnapshots = new Map<string, FileSnapshot>()
  private streamingKey: string | undefined
  private turnUsage: Usage = ZERO
  private turnStart: number | undefined
  private lastPresetSeq = -10
  /** A failed request shows its error on the answer; the turn's end repeating it would say it twice. */
  private shownError: ErrorInfo | undefined
  /** The error of the last model request, for the retry notice that may follow it. */
  private lastFailure: ErrorInfo | undefined
  private changes: ViewChange[] = []
  private cause = ''

  /** Folds a whole page of events at once (the same as applying them one by one). */
  static fold(events: Iterable<LogEvent>): SessionView {
    const view = new SessionView()
    for (const event of events) view.apply(event)
    return view
  }

  /** Approvals asked and not yet decided in the applied events, oldest first. */
  get pendingApprovals(): ApprovalInfo[] {
    return [...this.waiting.values()].map((entry) => entry.approval)
  }

  /** The item with this key, if shown. */
  get(key: string): Item | undefined {
    const at = this.positions.get(key)
    return at === undefined ? undefined : this.items[at]
  }

  /** Applies the next event and reports what it changed (empty when it changed nothing shown). */
  apply(event: LogEvent): ViewChange[] {
    this.changes = []
    this.cause = event.type
    this.applied++
    this.lastSeq = event.seq
    this.fold(event)
    return this.changes
  }

  private fold(event: LogEvent): void {
    const { type, seq, data } = event
    switch (type) {
      case 'turn/start':
        this.openTurn = true
        this.shownError = undefined
        this.turnUsage = ZERO
        this.turnStart = event.time
        return this.sessionChanged()
      case 'step/start':
        this.streamingKey = undefined
        return
      case 'user/message':
        return this.userMessage(event)
      case 'assistant/chunk': {
        const kind = data.kind === 'reasoning' ? 'reasoning' : 'text'
        const delta = { kind, text: String(data.text ?? '') } as const
        const current = this.streamingKey ? (this.get(this.streamingKey) as AssistantItem | undefined) : undefined
        if (!current) {
          const item: AssistantItem = {
            kind: 'assistant',
            key: `a${seq}`,
            version: seq,
            seq,
            text: kind === 'text' ? delta.text : '',
            reasoning: kind === 'reasoning' ? delta.text : '',
            streaming: true,
          }
          this.streamingKey = item.key
          return this.add(item, delta)
        }
        return this.update(
          current,
          kind === 'reasoning'
            ? { reasoning: current.reasoning + delta.text, version: seq }
            : { text: current.text + delta.text, version: seq },
          delta,
        )
      }
      case 'assistant/message':
        return this.assistantMessage(event)
      case 'tool/call': {
        const change = proposedChange(data.arguments)
        const item: ToolItem = {
          kind: 'tool',
          key: this.toolKey(data.callId, seq),
          version: seq,
          seq,
          callId: data.callId,
          name: data.name,
          args: data.arguments,
          status: 'pending',
          startedAt: event.time,
          ...(change ? { change, changeState: 'proposed' as const } : {}),
          ...(typeof data.parentCallId === 'string' ? { parentCallId: data.parentCallId } : {}),
        }
        this.toolKeys.set(data.callId, item.key)
        this.openCalls.add(item.key)
        return this.add(item)
      }
      case 'tool/dispatched': {
        const item = this.tool(data.callId)
        if (item) this.update(item, { status: 'running', version: seq })
        return
      }
      case 'tool/output': {
        const item = this.tool(data.callId)
        if (!item || typeof data.text !== 'string') return
        const before = item.printed ?? { text: '', raw: '', capped: false }
        const printed = {
          text: before.text + data.text,
          raw: before.raw + (typeof data.raw === 'string' ? data.raw : data.text),
          capped: data.capped === true,
        }
        return this.update(item, { printed, version: seq })
      }
      case 'tool/result': {
        const content: Block[] = data.content ?? []
        const output = textOf(content, 'text')
        const item = this.tool(data.callId)
        const ending = item && COMMAND_TOOLS.has(item.name) ? commandEnding(output) : undefined
        const code: string | undefined = data.error?.code
        const status = code && INTERRUPTED_CODES.has(code) ? 'interrupted' : data.error || ending ? 'error' : 'done'
        const changeState: ChangeState =
          status === 'done'
            ? 'applied'
            : code && INTERRUPTED_CODES.has(code) && !NOT_STARTED_CODES.has(code)
              ? 'unknown'
              : 'refused'
        const result = {
          status,
          output,
          content,
          version: seq,
          endedAt: event.time,
          ...(data.error ? { error: data.error } : {}),
          ...(ending ? { ending } : {}),
          ...(item?.change ? { changeState } : {}),
        } as const
        this.resultCalls.set(seq, data.callId)
        if (item) {
          this.openCalls.delete(item.key)
          return this.update(item, result)
        }
        const key = this.toolKey(data.callId, seq)
        this.toolKeys.set(data.callId, key)
        return this.add({
          kind: 'tool',
          key,
          seq,
          callId: data.callId,
          name: 'tool',
          args: undefined,
          startedAt: event.time,
          ...result,
        })
      }
      case 'hook/updated-input':
      case 'tool/edited': {
        // A PreToolUse hook or the approver rewrote the call: the card shows what ran, and says who edited it.
        const item = this.tool(data.callId)
        const change = proposedChange(data.arguments)
        const editedBy = event.type === 'tool/edited' ? ('approver' as const) : ('hook' as const)
        if (item) this.update(item, { args: data.arguments, version: seq, editedBy, ...(change ? { change } : {}) })
        return
      }
      case 'checkpoint/before':
      case 'checkpoint/after':
        return this.checkpoint(event)
      case 'hook/run':
        return this.hookRun(event)
      case 'tool/pruned': {
        const callId = this.resultCalls.get(data.seq)
        const item = callId === undefined ? undefined : this.tool(callId)
        if (item) this.update(item, { pruned: { seq, ...(data.note ? { note: data.note } : {}) }, version: seq })
        return
      }
      case 'approval/asked':
        return this.approvalAsked(event)
      case 'approval/decided': {
        const entry = this.waiting.get(data.requestId)
        if (!entry) return
        this.waiting.delete(data.requestId)
        const decided = { answer: data.answer, by: data.by, ...(data.note ? { note: data.note } : {}) }
        const item = this.get(entry.key)
        if (item?.kind === 'tool' && item.approval)
          this.update(item, { approval: { ...item.approval, decided }, version: seq })
        else if (item?.kind === 'approval') this.update(item, { approval: { ...item.approval, decided }, version: seq })
        return
      }
      case 'model/route':
        this.route = data.route
        this.sessionChanged()
        return this.routeNotice(seq, `Model: ${routeText(data.route)}`)
      case 'request/context':
        this.window = data.contextWindow
        return this.sessionChanged()
      case 'plan/mode':
        this.planMode = data.active === true
        this.sessionChanged()
        return this.notice(
          seq,
          this.planMode
            ? 'Plan mode: only reading tools run until the plan is approved'
            : data.requestId
              ? 'Plan mode ended: the plan was approved'
              : 'Plan mode ended',
          'info',
          {
            cause: 'plan-mode',
          },
        )
      case 'agent/preset':
        this.agentPreset = data.name
        this.sessionChanged()
        return this.notice(
          seq,
          `Agent preset: ${data.name}${data.description ? ` (${data.description})` : ''}`,
          'info',
          { cause: 'agent-preset' },
        )
      case 'job/ended':
        return this.notice(
          seq,
          `Background job ${data.jobId} ${jobEnding(data)}`,
          data.reason === 'exited' && data.exitCode !== 0 ? 'warn' : 'info',
          { cause: 'job' },
        )
      case 'job/lost':
        return this.notice(seq, `Background job ${data.jobId} was lost: dsh stopped while it ran`, 'warn', {
          cause: 'job',
        })
      case 'session/title':
        // The rule of `foldTitle` (@dsh/session-admin): a model title never replaces a user one.
        if (typeof data.title !== 'string' || (data.source !== 'user' && this.title?.source === 'user')) return
        this.title = { title: data.title, source: data.source === 'user' ? 'user' : 'model' }
        return this.sessionChanged()
      case 'todo/updated':
        // The whole list each time: the latest replaces what was shown (web panel, ACP plan, headless line).
        this.todos = Array.isArray(data.items)
          ? data.items.map((item: TodoEntry) => ({
              content: String(item.content),
              status: item.status,
              priority: item.priority,
            }))
          : []
        return this.sessionChanged()
      case 'permission/preset':
        this.preset = data.preset
        this.lastPresetSeq = seq
        this.sessionChanged()
        return this.notice(
          seq,
          `Permissions: ${data.preset} (sandbox ${data.mode}, approvals ${data.approval})`,
          data.preset === 'danger-full-access' ? 'warn' : 'info',
          { cause: 'preset' },
        )
      case 'sandbox/mode':
        // A preset logs its mode and policy right after itself: its own notice already says them.
        if (seq - this.lastPresetSeq > 2)
          this.notice(seq, `Sandbox mode: ${data.mode}`, data.mode === 'danger-full-access' ? 'warn' : 'info', {
            cause: 'sandbox',
          })
        return
      case 'approval/policy':
        if (seq - this.lastPresetSeq > 2)
          this.notice(seq, `Approval policy: ${data.policy}`, 'info', { cause: 'approval-policy' })
        return
      case 'compaction/end':
        // A success shows as its summary message; a failure would otherwise leave no trace on screen.
        if (!data.ok)
          this.notice(
            seq,
            `Compaction failed${data.code ? ` (${data.code})` : ''}${data.reason ? `: ${data.reason}` : ''}; the conversation is kept as it was.`,
            'warn',
            { cause: 'compaction' },
          )
        return
      case 'context/window':
        return this.notice(
          seq,
          `The provider says this model's context window is ${Number(data.contextWindow).toLocaleString('en')} tokens; the session uses that from now on.`,
          'info',
          {
            cause: 'compaction',
          },
        )
      case 'context/relief-failed':
        return this.notice(
          seq,
          `No room could be made in the context: tried ${(data.tried ?? []).join(', ') || 'nothing'}; ${data.reason ?? ''}`.trim(),
          'warn',
          { cause: 'compaction' },
        )
      case 'skill/catalog':
        return this.skillCatalog(seq, data)
      case 'turn/end':
        return this.turnEnd(event)
      case 'rewind/done':
        return this.notice(seq, rewindText(data), data.conflicts?.length || data.skipped?.length ? 'warn' : 'info', {
          cause: 'rewind',
        })
      case 'llm/retry':
        return this.retry(event)
      case 'subagent/start':
        return this.subagentStart(event)
      case 'subagent/end': {
        const item = this.get(`s${data.childSessionId}`)
        if (item?.kind !== 'subagent') return
        return this.update(item, {
          status: data.status,
          text: data.text,
          error: data.error,
          endedAt: event.time,
          version: seq,
        })
      }
      case 'subagent/parent':
        return this.notice(
          seq,
          `Subagent "${data.description}" (${data.agentType}) of session ${data.parentSessionId}`,
          'info',
          { cause: 'subagent' },
        )
      case 'sandbox/ceiling':
        return this.notice(seq, `Sandbox ceiling: ${data.mode} (${data.why})`, 'info', { cause: 'sandbox' })
      default:
        if (!UNSHOWN.has(type)) this.skipped.set(type, (this.skipped.get(type) ?? 0) + 1)
    }
  }

  /**
   * A file a call touched, before or after it (@dsh/checkpoints): the card keeps both sides, so a surface can
   * show the whole file's change from the log (its content is in the checkpoint store). A call without its
   * own `checkpoint/before` (the file was already touched this turn) starts from what the file was left as.
   */
  private checkpoint({ type, seq, data }: LogEvent): void {
    const snapshot = snapshotOf(data?.state)
    if (typeof data?.path !== 'string' || !snapshot) return
    const { path } = data
    const earlier = this.lastSnapshots.get(path)
    this.lastSnapshots.set(path, snapshot)
    const item = typeof data.callId === 'string' ? this.tool(data.callId) : undefined
    if (!item) return
    const files = item.files ?? []
    const at = files.findIndex((touch) => touch.path === path)
    const touched = at < 0 ? { path, ...(earlier ? { before: earlier } : {}) } : files[at]!
    const next: FileTouch =
      type === 'checkpoint/before' ? { ...touched, before: snapshot } : { ...touched, after: snapshot }
    this.update(item, {
      files: at < 0 ? [...files, next] : files.map((touch, index) => (index === at ? next : touch)),
      version: seq,
    })
  }

  /** A hook's run is shown when it changed something: a block, a refusal, a question, a stop, a failure. */
  private hookRun({ seq, data }: LogEvent): void {
    if (!HOOK_SHOWN.has(data.decision)) return
    const what = `${data.event} hook ${JSON.stringify(String(data.command ?? '').slice(0, 80))}`
    this.notice(
      seq,
      `${what}: ${data.decision}${data.reason ? ` — ${String(data.reason).slice(0, 500)}` : ''}`,
      data.decision === 'ask' ? 'info' : 'warn',
      { cause: 'hook' },
    )
  }

  private userMessage({ seq, data }: LogEvent): void {
    if (data.source === 'inject' || data.source === 'instructions') return
    if (data.source === 'hook') return this.notice(seq, textOf(data.content ?? [], 'text'), 'muted', { cause: 'hook' })
    if (data.source === 'summary') {
      const replaces =
        data.replaces && typeof data.replaces.fromSeq === 'number'
          ? { replaces: { fromSeq: data.replaces.fromSeq, toSeq: data.replaces.toSeq } }
          : {}
      return this.notice(seq, 'Earlier conversation was summarised to fit the context window.', 'info', {
        cause: 'summary',
        ...replaces,
      })
    }
    const content: Block[] = data.content ?? []
    const images: ImageRef[] = content
      .filter((block) => block.type === 'image')
      .map((block) => ({
        mediaType: block.mediaType!,
        ...(block.sha256 ? { sha256: block.sha256 } : {}),
        ...(block.data ? { data: block.data } : {}),
      }))
    this.add({
      kind: 'user',
      key: `u${seq}`,
      version: seq,
      seq,
      text: textOf(content, 'text'),
      source: data.source,
      images,
      content,
    })
  }

  private assistantMessage({ seq, data }: LogEvent): void {
    const text = textOf(data.content, 'text')
    const reasoning = textOf(data.content, 'reasoning')
    this.turnUsage = addUsage(this.turnUsage, data.usage)
    this.lastUsage = data.usage
    this.lastFailure = data.error
    if (data.error) this.shownError = data.error
    const final = {
      text,
      reasoning,
      streaming: false,
      version: seq,
      ...(data.error ? { error: data.error } : {}),
      ...(data.interrupted ? { interrupted: true } : {}),
    }
    const streaming = this.streamingKey ? this.get(this.streamingKey) : undefined
    this.streamingKey = undefined
    if (streaming) this.update(streaming, final)
    else if (text || reasoning || data.error) this.add({ kind: 'assistant', key: `a${seq}`, seq, ...final })
    // Reported in the order of what happened: the answer, then what its request used (a replay that turns
    // changes into messages tells the thought and text before the usage, as the live stream did).
    this.changes.push({ op: 'usage', usage: { ...ZERO, ...data.usage }, cause: this.cause })
    this.sessionChanged()
  }

  private approvalAsked({ seq, data }: LogEvent): void {
    const approval: ApprovalInfo = {
      requestId: data.requestId,
      tool: data.tool,
      summary: data.summary,
      reason: data.reason,
      ...(data.callId ? { callId: data.callId } : {}),
      ...(data.rule ? { rule: data.rule } : {}),
    }
    const tool = data.callId ? this.tool(data.callId) : undefined
    if (tool) {
      this.waiting.set(data.requestId, { approval, key: tool.key })
      return this.update(tool, { approval, version: seq })
    }
    const key = `p${data.requestId}`
    this.waiting.set(data.requestId, { approval, key })
    this.add({ kind: 'approval', key, version: seq, seq, approval })
  }

  /** A new child's card, or its card again running (a follow-up): one card per child session. */
  private subagentStart({ seq, time, data }: LogEvent): void {
    const item = this.get(`s${data.childSessionId}`)
    if (item?.kind === 'subagent')
      return this.update(item, {
        status: 'running',
        turns: item.turns + 1,
        text: undefined,
        error: undefined,
        endedAt: undefined,
        startedAt: time,
        version: seq,
      })
    // One card per call: the call that started this child is shown by the child's card (a follow-up's call,
    // whose child's card is further up, keeps its own).
    const call = typeof data.callId === 'string' ? this.tool(data.callId) : undefined
    if (call) this.update(call, { shownBy: `s${data.childSessionId}`, version: seq })
    this.add({
      kind: 'subagent',
      key: `s${data.childSessionId}`,
      version: seq,
      seq,
      childSessionId: data.childSessionId,
      description: data.description,
      agentType: data.agentType,
      via: data.kind,
      ceiling: data.ceiling,
      status: 'running',
      turns: 1,
      startedAt: time,
      ...(data.callId ? { callId: data.callId } : {}),
    })
  }

  /**
   * The applied log will not grow (its session is not running anywhere this surface knows of, as after a
   * crash): calls still waiting for a result and a message still streaming show as interrupted now, not at
   * the next message. Returns what changed.
   */
  settle(): ViewChange[] {
    this.changes = []
    this.cause = 'settle'
    // No event made this change: a version between the last seq and the next keeps memoised rows honest.
    const version = this.lastSeq + 0.5
    this.interruptOpenCalls(version)
    const streaming = this.streamingKey ? this.get(this.streamingKey) : undefined
    if (streaming?.kind === 'assistant' && streaming.streaming)
      this.update(streaming, { streaming: false, interrupted: true, version })
    this.streamingKey = undefined
    if (this.openTurn) {
      this.openTurn = false
      this.sessionChanged()
    }
    return this.changes
  }

  private interruptOpenCalls(seq: number): void {
    for (const key of this.openCalls) {
      const item = this.get(key)
      if (item?.kind !== 'tool') continue
      this.update(item, {
        status: 'interrupted',
        version: seq,
        ...(item.change ? { changeState: item.status === 'running' ? 'unknown' : 'refused' } : {}),
      })
    }
    this.openCalls.clear()
  }

  private turnEnd({ seq, time, data }: LogEvent): void {
    this.openTurn = false
    this.interruptOpenCalls(seq)
    this.sessionChanged()
    // The runtime logs a cut stream's message before the turn's end; a log that lacks it (written by something
    // else, or a page cut short) must not leave an answer streaming forever.
    const streaming = this.streamingKey ? this.get(this.streamingKey) : undefined
    if (streaming?.kind === 'assistant' && streaming.streaming)
      this.update(streaming, { streaming: false, interrupted: true, version: seq })
    this.streamingKey = undefined
    const repeated = sameError(data.error, this.shownError)
    this.add({
      kind: 'turn-end',
      key: `e${seq}`,
      version: seq,
      seq,
      reason: data.reason,
      usage: this.turnUsage,
      endedAt: time,
      ...(this.turnStart !== undefined ? { startedAt: this.turnStart } : {}),
      ...(data.error && !repeated ? { error: data.error } : {}),
      ...(data.error ? { loggedError: data.error } : {}),
    })
    this.turnStart = undefined
    this.shownError = undefined
  }

  /**
   * The attempt that failed is being tried again: its error is not the outcome, so the notice replaces it
   * (a partial answer it streamed stays, without the error and its "send again" advice).
   */
  private retry({ seq, data }: LogEvent): void {
    const failed = this.items.at(-1)
    if (failed?.kind === 'assistant' && failed.error && !failed.streaming) {
      if (failed.text || failed.reasoning) this.update(failed, { error: undefined, version: seq })
      else this.removeLast()
      this.shownError = undefined
    }
    const retry = { ...retryInfoOf(data), ...(this.lastFailure ? { failure: this.lastFailure } : {}) }
    this.notice(seq, retryText(data), 'muted', { cause: 'retry', retry })
  }

  /**
   * `t<callId>`, unless a card already has it: call ids come from the model, which may repeat one, and two
   * cards sharing a key would hide one of them. The newest call with an id gets its result and approval.
   */
  private toolKey(callId: string, seq: number): string {
    let key = `t${callId}`
    for (let again = 0; this.positions.has(key); again++) key = `t${callId}@${seq}${again ? `.${again}` : ''}`
    return key
  }

  private tool(callId: string): ToolItem | undefined {
    const key = this.toolKeys.get(callId)
    const item = key === undefined ? undefined : this.get(key)
    return item?.kind === 'tool' ? item : undefined
  }

  /** Switches with nothing between them are one notice that updates (the route now in force), not a row each. */
  private routeNotice(seq: number, text: string): void {
    const last = this.items.at(-1)
    if (last?.kind === 'notice' && last.cause === 'route') return this.update(last, { text, version: seq })
    this.notice(seq, text, 'info', { cause: 'route' })
  }

  /** The skills offered from here on (`skill/catalog` of @dsh/tool-skill), and the SKILL.md files left out. */
  private skillCatalog(
    seq: number,
    data: { skills?: { name: string }[]; problems?: { file: string; field: string; message: string }[] },
  ): void {
    const names = (data.skills ?? []).map((skill) => skill.name)
    const problems = data.problems ?? []
    const offered = names.length ? `Skills: ${names.join(', ')}` : 'No skills'
    const left = problems.map((problem) => `${problem.file}: ${problem.field} ${problem.message}`).join('; ')
    this.notice(seq, problems.length ? `${offered}. Left out: ${left}` : offered, problems.length ? 'warn' : 'info', {
      cause: 'skills',
    })
  }

  private notice(
    seq: number,
    text: string,
    tone: NoticeItem['tone'],
    extra: Pick<NoticeItem, 'cause'> & Partial<NoticeItem>,
  ): void {
    this.add({ kind: 'notice', key: `n${seq}`, version: seq, seq, text, tone, ...extra })
  }

  private add(item: Item, delta?: { kind: 'text' | 'reasoning'; text: string }): void {
    this.positions.set(item.key, this.items.length)
    this.items.push(item)
    this.changes.push({ op: 'added', item, cause: this.cause, ...(delta ? { delta } : {}) })
  }

  /** Replaces the item by a changed copy: the old object stays as it was, for whoever holds it. */
  private update<T extends Item>(
    previous: T,
    patch: Partial<T>,
    delta?: { kind: 'text' | 'reasoning'; text: string },
  ): void {
    const item = { ...previous, ...patch } as T
    this.items[this.positions.get(previous.key)!] = item
    this.changes.push({ op: 'updated', item, previous, cause: this.cause, ...(delta ? { delta } : {}) })
  }

  private removeLast(): void {
    const item = this.items.pop()!
    this.positions.delete(item.key)
    this.changes.push({ op: 'removed', item, cause: this.cause })
  }

  private sessionChanged(): void {
    this.changes.push({ op: 'session', cause: this.cause })
  }
}
