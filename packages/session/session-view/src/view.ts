import type { ApprovalInfo, AssistantItem, Block, ErrorInfo, ImageRef, Item, LogEvent, NoticeItem, ToolItem, Usage, ViewChange } from './items.ts'
import { proposedChange } from './change.ts'
import { retryInfoOf, retryText } from './retry.ts'

const ZERO: Usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }

/** Kinds a display has nothing to show for: applied knowingly, not counted as skipped. */
const UNSHOWN = new Set(['step/end', 'request/header', 'inbox/spliced', 'agent/system-prompt', 'sandbox/probe', 'fs/observed', 'compaction/start'])

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
})

const routeText = (route: { provider: string; model: string; effort?: string }) => `${route.provider}/${route.model}${route.effort ? ` · ${route.effort} effort` : ''}`

const sameError = (a: ErrorInfo | undefined, b: ErrorInfo | undefined) => !!a && !!b && a.code === b.code && a.message === b.message

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
  /** Events applied, and those of kinds this view does not know, by kind. */
  applied = 0
  readonly skipped = new Map<string, number>()

  private readonly positions = new Map<string, number>()
  private readonly toolKeys = new Map<string, string>()
  private readonly resultCalls = new Map<number, string>()
  private readonly waiting = new Map<string, { approval: ApprovalInfo; key: string }>()
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
        return this.update(current, kind === 'reasoning' ? { reasoning: current.reasoning + delta.text, version: seq } : { text: current.text + delta.text, version: seq }, delta)
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
          ...(change ? { change } : {}),
        }
        this.toolKeys.set(data.callId, item.key)
        return this.add(item)
      }
      case 'tool/dispatched': {
        const item = this.tool(data.callId)
        if (item) this.update(item, { status: 'running', version: seq })
        return
      }
      case 'tool/result': {
        const content: Block[] = data.content ?? []
        const result = { status: data.error ? 'error' : 'done', output: textOf(content, 'text'), content, version: seq, endedAt: event.time, ...(data.error ? { error: data.error } : {}) } as const
        this.resultCalls.set(seq, data.callId)
        const item = this.tool(data.callId)
        if (item) return this.update(item, result)
        const key = this.toolKey(data.callId, seq)
        this.toolKeys.set(data.callId, key)
        return this.add({ kind: 'tool', key, seq, callId: data.callId, name: 'tool', args: undefined, startedAt: event.time, ...result })
      }
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
        if (item?.kind === 'tool' && item.approval) this.update(item, { approval: { ...item.approval, decided }, version: seq })
        else if (item?.kind === 'approval') this.update(item, { approval: { ...item.approval, decided }, version: seq })
        return
      }
      case 'model/route':
        this.route = data.route
        this.sessionChanged()
        return this.notice(seq, `Model: ${routeText(data.route)}`, 'info', { cause: 'route' })
      case 'request/context':
        this.window = data.contextWindow
        return this.sessionChanged()
      case 'permission/preset':
        this.preset = data.preset
        this.lastPresetSeq = seq
        this.sessionChanged()
        return this.notice(seq, `Permissions: ${data.preset} (sandbox ${data.mode}, approvals ${data.approval})`, data.preset === 'danger-full-access' ? 'warn' : 'info', { cause: 'preset' })
      case 'sandbox/mode':
        // A preset logs its mode and policy right after itself: its own notice already says them.
        if (seq - this.lastPresetSeq > 2) this.notice(seq, `Sandbox mode: ${data.mode}`, data.mode === 'danger-full-access' ? 'warn' : 'info', { cause: 'sandbox' })
        return
      case 'approval/policy':
        if (seq - this.lastPresetSeq > 2) this.notice(seq, `Approval policy: ${data.policy}`, 'info', { cause: 'approval-policy' })
        return
      case 'compaction/end':
        // A success shows as its summary message; a failure would otherwise leave no trace on screen.
        if (!data.ok)
          this.notice(seq, `Compaction failed${data.code ? ` (${data.code})` : ''}${data.reason ? `: ${data.reason}` : ''}; the conversation is kept as it was.`, 'warn', { cause: 'compaction' })
        return
      case 'skill/catalog':
        return this.skillCatalog(seq, data)
      case 'turn/end':
        return this.turnEnd(event)
      case 'llm/retry':
        return this.retry(event)
      default:
        if (!UNSHOWN.has(type)) this.skipped.set(type, (this.skipped.get(type) ?? 0) + 1)
    }
  }

  private userMessage({ seq, data }: LogEvent): void {
    if (data.source === 'inject' || data.source === 'instructions') return
    if (data.source === 'summary') {
      const replaces = data.replaces && typeof data.replaces.fromSeq === 'number' ? { replaces: { fromSeq: data.replaces.fromSeq, toSeq: data.replaces.toSeq } } : {}
      return this.notice(seq, 'Earlier conversation was summarised to fit the context window.', 'info', { cause: 'summary', ...replaces })
    }
    const content: Block[] = data.content ?? []
    const images: ImageRef[] = content
      .filter((block) => block.type === 'image')
      .map((block) => ({ mediaType: block.mediaType!, ...(block.sha256 ? { sha256: block.sha256 } : {}), ...(block.data ? { data: block.data } : {}) }))
    this.add({ kind: 'user', key: `u${seq}`, version: seq, seq, text: textOf(content, 'text'), source: data.source, images, content })
  }

  private assistantMessage({ seq, data }: LogEvent): void {
    const text = textOf(data.content, 'text')
    const reasoning = textOf(data.content, 'reasoning')
    this.turnUsage = addUsage(this.turnUsage, data.usage)
    this.lastUsage = data.usage
    this.lastFailure = data.error
    if (data.error) this.shownError = data.error
    this.changes.push({ op: 'usage', usage: { ...ZERO, ...data.usage }, cause: this.cause })
    this.sessionChanged()
    const final = { text, reasoning, streaming: false, version: seq, ...(data.error ? { error: data.error } : {}), ...(data.interrupted ? { interrupted: true } : {}) }
    const streaming = this.streamingKey ? this.get(this.streamingKey) : undefined
    this.streamingKey = undefined
    if (streaming) this.update(streaming, final)
    else if (text || reasoning || data.error) this.add({ kind: 'assistant', key: `a${seq}`, seq, ...final })
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

  private turnEnd({ seq, time, data }: LogEvent): void {
    this.openTurn = false
    this.sessionChanged()
    // The runtime logs a cut stream's message before the turn's end; a log that lacks it (written by something
    // else, or a page cut short) must not leave an answer streaming forever.
    const streaming = this.streamingKey ? this.get(this.streamingKey) : undefined
    if (streaming?.kind === 'assistant' && streaming.streaming) this.update(streaming, { streaming: false, interrupted: true, version: seq })
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

  /** The skills offered from here on (`skill/catalog` of @dsh/tool-skill), and the SKILL.md files left out. */
  private skillCatalog(seq: number, data: { skills?: { name: string }[]; problems?: { file: string; field: string; message: string }[] }): void {
    const names = (data.skills ?? []).map((skill) => skill.name)
    const problems = data.problems ?? []
    const offered = names.length ? `Skills: ${names.join(', ')}` : 'No skills'
    const left = problems.map((problem) => `${problem.file}: ${problem.field} ${problem.message}`).join('; ')
    this.notice(seq, problems.length ? `${offered}. Left out: ${left}` : offered, problems.length ? 'warn' : 'info', { cause: 'skills' })
  }

  private notice(seq: number, text: string, tone: NoticeItem['tone'], extra: Pick<NoticeItem, 'cause'> & Partial<NoticeItem>): void {
    this.add({ kind: 'notice', key: `n${seq}`, version: seq, seq, text, tone, ...extra })
  }

  private add(item: Item, delta?: { kind: 'text' | 'reasoning'; text: string }): void {
    this.positions.set(item.key, this.items.length)
    this.items.push(item)
    this.changes.push({ op: 'added', item, cause: this.cause, ...(delta ? { delta } : {}) })
  }

  /** Replaces the item by a changed copy: the old object stays as it was, for whoever holds it. */
  private update<T extends Item>(previous: T, patch: Partial<T>, delta?: { kind: 'text' | 'reasoning'; text: string }): void {
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
