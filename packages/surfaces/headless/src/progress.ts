import type { AnySessionEvent, SessionEvent } from '@dsh/session'
import { oneLine } from './text.ts'

/** `llm/retry` data (see @dsh/llm-retry), read field by field: logs written before `maxRetries` existed lack it. */
interface RetryData {
  attempt?: unknown
  maxRetries?: unknown
  code?: unknown
  delayMs?: unknown
}

/**
 * What the agent is doing, as lines for a person watching a terminal (stderr, only when it is a TTY):
 * "thinking…" once per step that reasons, each tool call with a short summary of its arguments, failed
 * tool results, model requests that failed and will be retried, and the tokens used so far in this run.
 */
export class Progress {
  private thinking = false
  private readonly tokens = { input: 0, cached: 0, output: 0 }

  constructor(
    private readonly write: (line: string) => void,
    /** A short summary of one call (`bash: npm test`). */
    private readonly describeCall: (name: string, args: unknown) => string,
    private readonly previewChars: number,
  ) {}

  event(raw: SessionEvent): void {
    // Declared by @dsh/llm-retry (a plugin this surface may not depend on): read by its documented shape.
    if ((raw.type as string) === 'llm/retry') return this.retry(raw.data as RetryData)
    const event = raw as AnySessionEvent
    switch (event.type) {
      case 'step/start':
        this.thinking = false
        break
      case 'assistant/chunk':
        if (event.data.kind === 'reasoning' && !this.thinking) {
          this.thinking = true
          this.write('thinking…')
        }
        break
      case 'tool/call':
        this.write(`→ ${this.describeCall(event.data.name, event.data.arguments)}`)
        break
      case 'tool/result':
        if (event.data.error) this.write(`  ✗ ${event.data.error.code}: ${oneLine(event.data.error.message, this.previewChars)}`)
        break
      case 'assistant/message': {
        const usage = event.data.usage
        // A request that failed before any answer (retried, or ending the turn) used nothing worth a line.
        if (usage.input + usage.cacheRead + usage.cacheWrite + usage.output === 0) break
        this.tokens.input += usage.input + usage.cacheRead + usage.cacheWrite
        this.tokens.cached += usage.cacheRead
        this.tokens.output += usage.output
        const { input, cached, output } = this.tokens
        this.write(`  tokens: ${input.toLocaleString('en')} in (${cached.toLocaleString('en')} cached), ${output.toLocaleString('en')} out`)
        break
      }
    }
  }

  /** A failed model request will be tried again: say so, or the wait looks like a hang. */
  private retry(data: RetryData): void {
    const ms = typeof data.delayMs === 'number' ? data.delayMs : undefined
    const seconds = ms === undefined ? 'a moment' : ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`
    const code = typeof data.code === 'string' && data.code ? ` (${data.code})` : ''
    // Logs written before llm-retry recorded maxRetries know only the attempt.
    const total = typeof data.maxRetries === 'number' ? ` of ${data.maxRetries}` : ''
    const which = typeof data.attempt === 'number' ? ` (retry ${data.attempt}${total})` : ''
    this.write(`  model request failed${code}; retrying in ${seconds}${which}`)
  }
}
