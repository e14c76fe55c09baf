import type { ApprovalAnswerValue, WireEvent } from '@dsh/web-protocol'

export interface Usage {
  input: number
  output: number
  cacheRead: number
  cacheWrite: number
}

export interface ErrorInfo {
  code: string
  message: string
}

/** An image of a user message: stored (by hash) or, before the attachments plugin took it, inline. */
export interface ImageRef {
  mediaType: string
  sha256?: string
  data?: string
}

export interface ApprovalInfo {
  requestId: string
  tool: string
  summary: string
  reason: string
  callId?: string
  /** The grant rule an "allow for this session / always" answer keeps; absent: only once or reject. */
  rule?: string
  decided?: { answer: ApprovalAnswerValue; by: string; note?: string }
}

/**
 * What the conversation shows, folded from the log. `version` changes whenever an item's content does, so a
 * memoised row re-renders only when its own events changed.
 */
export type Item =
  | { kind: 'user'; key: string; version: number; seq: number; text: string; source: string; images: ImageRef[] }
  | { kind: 'assistant'; key: string; version: number; seq: number; text: string; reasoning: string; streaming: boolean; error?: ErrorInfo; interrupted?: boolean }
  | { kind: 'tool'; key: string; version: number; seq: number; callId: string; name: string; args: any; status: 'pending' | 'running' | 'done' | 'error'; output?: string; error?: ErrorInfo; startedAt: number; endedAt?: number; approval?: ApprovalInfo }
  | { kind: 'approval'; key: string; version: number; seq: number; approval: ApprovalInfo }
  | { kind: 'notice'; key: string; version: number; seq: number; text: string; tone: 'info' | 'warn' | 'muted' }
  | { kind: 'turn-end'; key: string; version: number; seq: number; reason: string; error?: ErrorInfo; usage: Usage; startedAt?: number; endedAt: number }

export interface Folded {
  items: Item[]
  /** A turn started and has not ended in the loaded events. */
  openTurn: boolean
  /** The last logged route and window, for the context meter. */
  window?: number
  lastUsage?: Usage
  route?: { provider: string; model: string; effort?: string }
  preset?: string
  pendingApprovals: ApprovalInfo[]
}

const textOf = (blocks: { type: string; text?: string }[] | undefined, type: string) =>
  (blocks ?? []).filter((block) => block.type === type && block.text).map((block) => block.text).join('')

const addUsage = (a: Usage, b: Partial<Usage> | undefined): Usage => ({
  input: a.input + (b?.input ?? 0),
  output: a.output + (b?.output ?? 0),
  cacheRead: a.cacheRead + (b?.cacheRead ?? 0),
  cacheWrite: a.cacheWrite + (b?.cacheWrite ?? 0),
})

const routeText = (route: { provider: string; model: string; effort?: string }) => `${route.provider}/${route.model}${route.effort ? ` · ${route.effort} effort` : ''}`

/**
 * Folds loaded events (contiguous by seq, perhaps starting mid-log) into conversation items. Kinds the
 * page does not know are skipped; a result whose call is on an earlier, unloaded page shows on its own.
 */
export function fold(events: readonly WireEvent[]): Folded {
  const items: Item[] = []
  const tools = new Map<string, Extract<Item, { kind: 'tool' }>>()
  const approvals = new Map<string, ApprovalInfo & { item: Item }>()
  let streaming: Extract<Item, { kind: 'assistant' }> | undefined
  let turnUsage: Usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }
  let turnStart: number | undefined
  const out: Folded = { items, openTurn: false, pendingApprovals: [] }
  let lastPresetSeq = -10
  // A failed request shows its error on the answer; the turn's end repeating it would say it twice.
  let shownError: ErrorInfo | undefined

  for (const event of events) {
    const { type, seq, data } = event
    switch (type) {
      case 'turn/start':
        out.openTurn = true
        shownError = undefined
        turnUsage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }
        turnStart = event.time
        break
      case 'step/start':
        streaming = undefined
        break
      case 'user/message': {
        if (data.source === 'inject' || data.source === 'instructions') break
        if (data.source === 'summary') {
          items.push({ kind: 'notice', key: `n${seq}`, version: seq, seq, text: 'Earlier conversation was summarised to fit the context window.', tone: 'info' })
          break
        }
        const images: ImageRef[] = (data.content ?? []).filter((block: { type: string }) => block.type === 'image').map((block: ImageRef) => ({ mediaType: block.mediaType, ...(block.sha256 ? { sha256: block.sha256 } : {}), ...(block.data ? { data: block.data } : {}) }))
        items.push({ kind: 'user', key: `u${seq}`, version: seq, seq, text: textOf(data.content, 'text'), source: data.source, images })
        break
      }
      case 'assistant/chunk': {
        if (!streaming) {
          streaming = { kind: 'assistant', key: `a${seq}`, version: seq, seq, text: '', reasoning: '', streaming: true }
          items.push(streaming)
        }
        if (data.kind === 'reasoning') streaming.reasoning += data.text
        else streaming.text += data.text
        streaming.version = seq
        break
      }
      case 'assistant/message': {
        const text = textOf(data.content, 'text')
        const reasoning = textOf(data.content, 'reasoning')
        turnUsage = addUsage(turnUsage, data.usage)
        out.lastUsage = data.usage
        if (data.error) shownError = data.error
        const final = { text, reasoning, streaming: false, version: seq, ...(data.error ? { error: data.error } : {}), ...(data.interrupted ? { interrupted: true } : {}) }
        if (streaming) Object.assign(streaming, final)
        else if (text || reasoning || data.error) items.push({ kind: 'assistant', key: `a${seq}`, seq, ...final })
        streaming = undefined
        break
      }
      case 'tool/call': {
        const item: Extract<Item, { kind: 'tool' }> = { kind: 'tool', key: `t${data.callId}`, version: seq, seq, callId: data.callId, name: data.name, args: data.arguments, status: 'pending', startedAt: event.time }
        tools.set(data.callId, item)
        items.push(item)
        break
      }
      case 'tool/dispatched': {
        const item = tools.get(data.callId)
        if (item) Object.assign(item, { status: 'running', version: seq })
        break
      }
      case 'tool/result': {
        const output = textOf(data.content, 'text')
        const result = { status: data.error ? 'error' : 'done', output, version: seq, endedAt: event.time, ...(data.error ? { error: data.error } : {}) } as const
        const item = tools.get(data.callId)
        if (item) Object.assign(item, result)
        else items.push({ kind: 'tool', key: `t${data.callId}`, seq, callId: data.callId, name: 'tool', args: undefined, startedAt: event.time, ...result })
        break
      }
      case 'approval/asked': {
        const approval: ApprovalInfo = { requestId: data.requestId, tool: data.tool, summary: data.summary, reason: data.reason, ...(data.callId ? { callId: data.callId } : {}), ...(data.rule ? { rule: data.rule } : {}) }
        const tool = data.callId ? tools.get(data.callId) : undefined
        if (tool) {
          tool.approval = approval
          tool.version = seq
          approvals.set(data.requestId, { ...approval, item: tool })
        } else {
          const item: Item = { kind: 'approval', key: `p${data.requestId}`, version: seq, seq, approval }
          items.push(item)
          approvals.set(data.requestId, { ...approval, item })
        }
        break
      }
      case 'approval/decided': {
        const entry = approvals.get(data.requestId)
        if (!entry) break
        const decided = { answer: data.answer, by: data.by, ...(data.note ? { note: data.note } : {}) }
        const item = entry.item
        if (item.kind === 'tool' && item.approval) item.approval = { ...item.approval, decided }
        if (item.kind === 'approval') item.approval = { ...item.approval, decided }
        item.version = seq
        approvals.delete(data.requestId)
        break
      }
      case 'model/route':
        out.route = data.route
        items.push({ kind: 'notice', key: `n${seq}`, version: seq, seq, text: `Model: ${routeText(data.route)}`, tone: 'info' })
        break
      case 'request/context':
        out.window = data.contextWindow
        break
      case 'permission/preset':
        out.preset = data.preset
        lastPresetSeq = seq
        items.push({ kind: 'notice', key: `n${seq}`, version: seq, seq, text: `Permissions: ${data.preset} (sandbox ${data.mode}, approvals ${data.approval})`, tone: data.preset === 'danger-full-access' ? 'warn' : 'info' })
        break
      case 'sandbox/mode':
        if (seq - lastPresetSeq > 2) items.push({ kind: 'notice', key: `n${seq}`, version: seq, seq, text: `Sandbox mode: ${data.mode}`, tone: data.mode === 'danger-full-access' ? 'warn' : 'info' })
        break
      case 'approval/policy':
        if (seq - lastPresetSeq > 2) items.push({ kind: 'notice', key: `n${seq}`, version: seq, seq, text: `Approval policy: ${data.policy}`, tone: 'info' })
        break
      case 'turn/end': {
        out.openTurn = false
        streaming = undefined
        const repeated = data.error && shownError && data.error.code === shownError.code && data.error.message === shownError.message
        items.push({ kind: 'turn-end', key: `e${seq}`, version: seq, seq, reason: data.reason, usage: turnUsage, endedAt: event.time, ...(turnStart !== undefined ? { startedAt: turnStart } : {}), ...(data.error && !repeated ? { error: data.error } : {}) })
        turnStart = undefined
        shownError = undefined
        break
      }
      case 'llm/retry': {
        // The attempt that failed is being tried again: its error is not the outcome, so the notice replaces
        // it (a partial answer it streamed stays, without the error and its "send again" advice).
        const failed = items.at(-1)
        if (failed?.kind === 'assistant' && failed.error && !failed.streaming) {
          if (failed.text || failed.reasoning) Object.assign(failed, { error: undefined, version: seq })
          else items.pop()
          shownError = undefined
        }
        items.push({ kind: 'notice', key: `n${seq}`, version: seq, seq, text: retryText(data), tone: 'muted' })
        break
      }
    }
  }
  out.pendingApprovals = [...approvals.values()].filter((entry) => !entry.decided).map(({ item: _item, ...approval }) => approval)
  return out
}

/** `Model request failed (SERVER); retrying in 2 s — retry 1 of 4`, from an `llm/retry` event (@dsh/llm-retry). */
export function retryText(data: { attempt?: unknown; maxRetries?: unknown; code?: unknown; delayMs?: unknown; reason?: unknown }): string {
  const code = typeof data.code === 'string' && data.code ? ` (${data.code})` : ''
  const delay = typeof data.delayMs === 'number' ? ` in ${waitText(data.delayMs)}` : ''
  // Logs written before llm-retry recorded maxRetries know only the attempt.
  const total = typeof data.maxRetries === 'number' ? ` of ${data.maxRetries}` : ''
  const which = typeof data.attempt === 'number' ? ` — retry ${data.attempt}${total}` : ''
  return `Model request failed${code}; retrying${delay}${which}`
}

function waitText(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`
  const seconds = Math.round(ms / 100) / 10
  return `${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)} s`
}

/** What to do about a failure, in the user's words. */
export function adviceFor(code: string | undefined): string | undefined {
  switch (code) {
    case 'AUTH':
      return 'The provider refused the API key. Check it in Settings → Models and keys.'
    case 'CREDENTIAL_MISSING':
      return 'No API key is set for this provider. Add one in Settings → Models and keys, then send again.'
    case 'QUOTA':
      return 'The provider account is out of credit. Top it up, or switch to another model.'
    case 'RATE_LIMIT':
      return 'The provider is rate limiting. Wait a moment and send again, or switch model.'
    case 'CONTEXT_WINDOW_EXCEEDED':
      return 'The conversation no longer fits the model\'s context window. Fork from an earlier turn, or switch to a model with a larger window.'
    case 'SERVER':
    case 'TIMEOUT':
    case 'TRANSPORT':
      return 'The provider did not answer properly. Check your connection and send again.'
    case 'UNKNOWN_PROVIDER':
      return 'No adapter for this provider is mounted. Pick another model.'
    case 'INVALID_REQUEST':
      return 'The provider rejected the request. Switching model or forking from an earlier turn may help.'
    case 'SESSION_LOCKED':
      return 'Another dsh process holds this session. Close it there, or fork to continue here.'
    default:
      return undefined
  }
}
