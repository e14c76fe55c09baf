import type { AnySessionEvent, SessionEvent } from '@dsh/session'
import { oneLine } from './text.ts'

/**
 * What the agent is doing, as lines for a person watching a terminal (stderr, only when it is a TTY):
 * "thinking…" once per step that reasons, each tool call with a short summary of its arguments, failed
 * tool results, and the tokens used so far in this run.
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
        this.tokens.input += usage.input + usage.cacheRead + usage.cacheWrite
        this.tokens.cached += usage.cacheRead
        this.tokens.output += usage.output
        const { input, cached, output } = this.tokens
        this.write(`  tokens: ${input.toLocaleString('en')} in (${cached.toLocaleString('en')} cached), ${output.toLocaleString('en')} out`)
        break
      }
    }
  }
}
