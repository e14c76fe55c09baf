import type { SessionEvent } from '@dsh/session'
import { retryWords, SessionView, type RetryInfo, type ViewChange } from '@dsh/session-view'
import { formatCacheShare, sessionUsage, type PriceTable } from '@dsh/usage-kit'
import { oneLine } from './text.ts'

/** The kinds `sessionUsage` reads: the route in force and the logged requests. */
const USAGE_KINDS = new Set([
  'request/context',
  'model/route',
  'assistant/message',
  'compaction/end',
  'title/request',
  'title/response',
])

const TODO_MARKS = { pending: '[ ]', in_progress: '[~]', completed: '[x]' } as const

/**
 * What the agent is doing, as lines for a person watching a terminal (stderr, only when it is a TTY):
 * "thinking…" once per answer that reasons, each tool call with a short summary of its arguments, failed
 * tool results, the first lines a running command prints, model requests that failed and will be retried,
 * and the tokens used so far in this run.
 * The events are folded by the display fold every surface shares (@dsh/session-view); lines come from the
 * changes it reports.
 */
export class Progress {
  private readonly view = new SessionView()
  /** The answer whose thinking was announced. */
  private thinkingKey: string | undefined
  private readonly tokens = { input: 0, cached: 0, output: 0 }

  constructor(
    private readonly write: (line: string) => void,
    /** A short summary of one call (`bash: npm test`). */
    private readonly describeCall: (name: string, args: unknown) => string,
    private readonly previewChars: number,
    /** Lines of a running call's printed output shown, per call. */
    private readonly outputLines = 0,
    /** Prices (`ctx.usagePrices`): the tokens line adds the run's cost and what the prompt cache saved. */
    private readonly prices: PriceTable = {},
  ) {}

  /** The events this run's usage is priced from (the route in force and the logged requests). */
  private readonly usageEvents: SessionEvent[] = []

  /** Per call: printed characters already split into lines, and the lines shown. */
  private readonly printed = new Map<string, { consumed: number; shown: number }>()

  event(event: SessionEvent): void {
    if (USAGE_KINDS.has(event.type)) this.usageEvents.push(event)
    for (const change of this.view.apply(event)) this.show(change)
  }

  private show(change: ViewChange): void {
    if (change.op === 'usage') return this.used(change.usage)
    if (change.op === 'session' && change.cause === 'todo/updated') return this.todos()
    if (change.op !== 'added' && change.op !== 'updated') return
    const item = change.item
    switch (item.kind) {
      case 'assistant':
        if (change.delta?.kind === 'reasoning' && this.thinkingKey !== item.key) {
          this.thinkingKey = item.key
          this.write('thinking…')
        }
        break
      case 'tool': {
        // A call a program made (code mode) stands indented under its run_code call.
        const indent = item.parentCallId !== undefined ? '    ' : ''
        if (change.op === 'added' && change.cause === 'tool/call')
          this.write(`${indent}→ ${this.describeCall(item.name, item.args)}`)
        if (change.cause === 'tool/output' && item.printed) this.printedLines(item.callId, item.printed.text)
        if (change.cause === 'tool/result' && item.error)
          this.write(`${indent}  ✗ ${item.error.code}: ${oneLine(item.error.message, this.previewChars)}`)
        else if (change.cause === 'tool/result' && item.ending) this.write(`${indent}  ✗ ${item.ending}`)
        // A call the turn ended without: cut, not failed and not done.
        if (change.cause === 'turn/end' && item.status === 'interrupted')
          this.write(`${indent}  ⊘ interrupted: ${this.describeCall(item.name, item.args)}`)
        break
      }
      case 'notice':
        if (change.op === 'added' && item.retry) this.retry(item.retry)
        break
    }
  }

  /** The complete lines a running call printed since the last piece, up to `outputLines` per call, then one note. */
  private printedLines(callId: string, text: string): void {
    const state = this.printed.get(callId) ?? { consumed: 0, shown: 0 }
    this.printed.set(callId, state)
    const end = text.lastIndexOf('\n') + 1
    if (end <= state.consumed) return
    const lines = text.slice(state.consumed, end).split('\n').slice(0, -1)
    state.consumed = end
    for (const line of lines) {
      if (state.shown > this.outputLines) return
      this.write(
        state.shown++ < this.outputLines
          ? `  │ ${oneLine(line, this.previewChars)}`
          : '  │ … (the rest is in the session log)',
      )
    }
  }

  private used(usage: { input: number; output: number; cacheRead: number; cacheWrite: number }): void {
    // A request that failed before any answer (retried, or ending the turn) used nothing worth a line.
    if (usage.input + usage.cacheRead + usage.cacheWrite + usage.output === 0) return
    this.tokens.input += usage.input + usage.cacheRead + usage.cacheWrite
    this.tokens.cached += usage.cacheRead
    this.tokens.output += usage.output
    const { input, cached, output } = this.tokens
    const share = formatCacheShare(input > 0 ? cached / input : null)
    this.write(
      `  tokens: ${input.toLocaleString('en')} in (${cached.toLocaleString('en')} cached${share ? `, ${share.replace(' cached', '')}` : ''}), ${output.toLocaleString('en')} out${this.money()}`,
    )
  }

  /** `· $0.0123, cache saved $0.0040` for this run's requests when every model it used has a price. */
  private money(): string {
    const { cost, cacheSaved } = sessionUsage(this.usageEvents, this.prices)
    return cost === null || cacheSaved === null || !Object.keys(this.prices).length
      ? ''
      : ` · $${cost.toFixed(4)}, cache saved $${cacheSaved.toFixed(4)}`
  }

  /** The agent's task list after each todo_write: counts, then one line per entry with its mark. */
  private todos(): void {
    const todos = this.view.todos ?? []
    const done = todos.filter((todo) => todo.status === 'completed').length
    this.write(`  todo: ${done} of ${todos.length} done`)
    for (const todo of todos) this.write(`    ${TODO_MARKS[todo.status]} ${oneLine(todo.content, this.previewChars)}`)
  }

  /** A failed model request will be tried again: say so, or the wait looks like a hang. */
  private retry(retry: RetryInfo): void {
    const { code, wait, count } = retryWords(retry)
    this.write(
      `  model request failed${code ? ` (${code})` : ''}; retrying in ${wait ?? 'a moment'}${count ? ` (${count})` : ''}`,
    )
  }
}
