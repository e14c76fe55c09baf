import { seal, type Message, type TextBlock } from '@dsh/llm'
import type { AnySessionEvent, SessionEvent, SessionEventMap, UserMessageSource } from './events.ts'

/** One message of the derived history, with the seq of the event it came from. */
export interface HistoryEntry {
  message: Message
  seq: number
  /** For user messages: where they came from (instructions and summaries matter to compaction). */
  source?: UserMessageSource | 'runtime-context'
}

/**
 * Kinds other packages declare whose `content` (text blocks) the model reads as a user-role message where
 * they stand in the log: a catalog of what the model may load (`skill/catalog` of @dsh/skill), the
 * memory a new session read (`memory/loaded` of @dsh/memory). An empty
 * `content` records a fact for people only. A new model-visible kind of this shape is added here, so the
 * request check derives it too (docs/architecture.md, "The session log").
 */
export const CONTEXT_KINDS: ReadonlySet<string> = new Set(['skill/catalog', 'memory/loaded'])

function contextEntry(event: SessionEvent): HistoryEntry | undefined {
  const content = (event.data as { content?: TextBlock[] }).content
  return content?.length ? { message: { role: 'user', content: [...content] }, seq: event.seq } : undefined
}

/**
 * An answer that failed or was cut (a stream the user cancelled, a transport error, a refusal): logged for
 * the user and the audit, never history. The model would otherwise see half an answer and then the whole
 * retried one, two assistant messages in a row, on every later request and after resume.
 */
export function isInterruptedAnswer(data: SessionEventMap['assistant/message']): boolean {
  return data.interrupted === true || data.finish === 'aborted' || data.finish === 'error' || data.error !== undefined
}

/**
 * The fold's state besides its entries: the calls of interrupted answers, whose results are not history either,
 * and the calls programs made (`tool/call` with `parentCallId`), whose results only the program read.
 */
interface FoldState {
  droppedCalls: Set<string>
}

function toEntry(event: AnySessionEvent, state: FoldState): HistoryEntry | undefined {
  if (CONTEXT_KINDS.has(event.type)) return contextEntry(event)
  switch (event.type) {
    case 'user/message':
      return { message: { role: 'user', content: [...event.data.content] }, seq: event.seq, source: event.data.source }
    case 'assistant/message':
      if (isInterruptedAnswer(event.data)) {
        // A cut answer's calls never ran as history sees it; repair still owes them a result, which is dropped too.
        for (const block of event.data.content) if (block.type === 'tool-call') state.droppedCalls.add(block.callId)
        return undefined
      }
      return event.data.content.length
        ? { message: { role: 'assistant', content: [...event.data.content] }, seq: event.seq }
        : undefined
    case 'runtime/context':
      // Facts about the workspace, told as a user message where they were logged (in the cached prefix).
      return {
        message: { role: 'user', content: [{ type: 'text', text: event.data.text }] },
        seq: event.seq,
        source: 'runtime-context',
      }
    case 'tool/call':
      // A program's call (`parentCallId`): the program read its result; the model reads the program's.
      if (event.data.parentCallId !== undefined) state.droppedCalls.add(event.data.callId)
      return undefined
    case 'tool/result': {
      if (state.droppedCalls.has(event.data.callId)) return undefined
      const block = {
        type: 'tool-result' as const,
        callId: event.data.callId,
        content: [...event.data.content],
        ...(event.data.error ? { isError: true } : {}),
      }
      return { message: { role: 'tool', content: [block] }, seq: event.seq }
    }
    default:
      return undefined
  }
}

/**
 * A shorter view of one logged tool call's arguments (`{ seq, callId, arguments, note? }`: the
 * `assistant/message` at `seq`, its call `callId`, shown with `arguments` from then on), declared with its
 * validator by @dsh/tool-result-pruner, which decides it. The fold applies it here so the request check derives
 * it too; read defensively, as the kind is ignorable (docs/architecture.md, "Context").
 */
export const ARGUMENTS_PRUNED_KIND = 'tool/arguments-pruned'

function pruneArguments(
  entries: HistoryEntry[],
  data: { seq?: unknown; callId?: unknown; arguments?: unknown },
): boolean {
  if (typeof data.seq !== 'number' || typeof data.callId !== 'string' || data.arguments === undefined) return false
  const at = entries.findIndex((entry) => entry.seq === data.seq)
  const entry = entries[at]
  if (!entry || entry.message.role !== 'assistant') return false
  let found = false
  const content = entry.message.content.map((block) =>
    block.type === 'tool-call' && block.callId === data.callId
      ? ((found = true), { ...block, arguments: data.arguments })
      : block,
  )
  if (found) entries[at] = { ...entry, message: { role: 'assistant', content } }
  return found
}

/** Applies one event to the entries; returns whether the history changed. */
function foldInto(entries: HistoryEntry[], event: AnySessionEvent, state: FoldState): boolean {
  if ((event.type as string) === ARGUMENTS_PRUNED_KIND) return pruneArguments(entries, event.data as object)
  if (event.type === 'tool/pruned') {
    // A shorter view of one logged tool result: the call keeps its result, the model sees less of it.
    const at = entries.findIndex((entry) => entry.seq === event.data.seq)
    const entry = entries[at]
    if (!entry || entry.message.role !== 'tool') return false
    const [block] = entry.message.content
    entries[at] = { ...entry, message: { role: 'tool', content: [{ ...block!, content: [...event.data.content] }] } }
    return true
  }
  const entry = toEntry(event, state)
  if (!entry) return false
  if (event.type === 'user/message' && event.data.replaces) {
    const { fromSeq, toSeq } = event.data.replaces
    const start = entries.findIndex((other) => other.seq >= fromSeq)
    const at = start === -1 ? entries.length : start
    let end = at
    while (end < entries.length && entries[end]!.seq <= toSeq) end++
    entries.splice(at, end - at, entry)
    return true
  }
  entries.push(entry)
  return true
}

/**
 * The model's history as a fold over the log (docs/architecture.md, "The session log"): `user/message`, `assistant/message` (non-empty,
 * not interrupted: `isInterruptedAnswer`), `tool/result` (not of an interrupted answer's call nor of a program's call), `runtime/context`
 * (as a user message); a `user/message` with `replaces` stands in for the messages of its seq range (a summary);
 * `tool/pruned` shows one tool result shorter, `tool/arguments-pruned` one call's arguments. Incremental: `update()` folds only events it has not seen.
 * Every message it returns is sealed (`seal` of @dsh/llm: deeply frozen) and the list is frozen, so no caller
 * can change the history it shares with the request check (docs/architecture.md, "The session log").
 */
export class MessageFold {
  private entries: HistoryEntry[] = []
  private state: FoldState = { droppedCalls: new Set() }
  private folded = 0
  private cache: readonly Message[] | undefined

  update(events: readonly SessionEvent[]): readonly Message[] {
    if (events.length < this.folded) {
      this.entries = []
      this.state = { droppedCalls: new Set() }
      this.folded = 0
      this.cache = undefined
    }
    for (let i = this.folded; i < events.length; i++)
      if (foldInto(this.entries, events[i] as AnySessionEvent, this.state)) this.cache = undefined
    this.folded = events.length
    return (this.cache ??= Object.freeze(this.entries.map((entry) => seal(entry.message))))
  }
}

/** The history with the seq (and source) of each message: what compaction cuts by. */
export function deriveEntries(events: readonly SessionEvent[]): HistoryEntry[] {
  const entries: HistoryEntry[] = []
  const state: FoldState = { droppedCalls: new Set() }
  for (const event of events) foldInto(entries, event as AnySessionEvent, state)
  return entries
}

/** Pure form of the fold, for one-off use (invariants, tests, replay). */
export function deriveMessages(events: readonly SessionEvent[]): Message[] {
  return deriveEntries(events).map((entry) => entry.message)
}
