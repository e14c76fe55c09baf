import { appendFileSync, mkdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'

/**
 * The input history of one workspace (↑/↓), kept in `$DSH_HOME/tui/history.jsonl` as `{ cwd, text }` lines.
 * It is the user's own typing, never shown to the model, so it is not a session event.
 */
export class History {
  private readonly file: string
  readonly entries: string[] = []

  constructor(
    home: string,
    private readonly cwd: string,
    private readonly limit: number,
  ) {
    this.file = join(home, 'tui', 'history.jsonl')
    if (!limit) return
    let text = ''
    try {
      text = readFileSync(this.file, 'utf8')
    } catch {
      return // no history yet
    }
    for (const line of text.split('\n')) {
      try {
        const entry = JSON.parse(line) as { cwd?: unknown; text?: unknown }
        if (entry.cwd === cwd && typeof entry.text === 'string') this.entries.push(entry.text)
      } catch {
        // a torn last line: skipped
      }
    }
    this.entries.splice(0, Math.max(0, this.entries.length - limit))
  }

  add(text: string): void {
    if (this.entries.at(-1) === text) return
    this.entries.push(text)
    if (this.entries.length > this.limit) this.entries.shift()
    if (!this.limit) return
    mkdirSync(dirname(this.file), { recursive: true, mode: 0o700 })
    appendFileSync(this.file, JSON.stringify({ cwd: this.cwd, text }) + '\n', { mode: 0o600 })
  }
}
