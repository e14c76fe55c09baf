// A program in a real pseudo-terminal, its screen read through a terminal emulator: what a user of a
// terminal UI sees, for tests and benchmarks (docs/architecture.md, "Tests"). Waits are on screen contents,
// never on sleeps.
import { createRequire } from 'node:module'
import { spawn, type IPty } from 'node-pty'
import type { Terminal as XTerm } from '@xterm/headless'

// The package's `module` field names a file it does not ship: load its CommonJS entry.
const { Terminal } = createRequire(import.meta.url)('@xterm/headless') as typeof import('@xterm/headless')

/** Keys as a terminal sends them. */
export const KEYS = {
  enter: '\r',
  escape: '\x1b',
  tab: '\t',
  shiftTab: '\x1b[Z',
  altEnter: '\x1b\r',
  ctrlJ: '\n',
  ctrlC: '\x03',
  ctrlD: '\x04',
  up: '\x1b[A',
  down: '\x1b[B',
  left: '\x1b[D',
  right: '\x1b[C',
  backspace: '\x7f',
} as const

export interface DriveOptions {
  cwd: string
  env: Record<string, string>
  cols?: number
  rows?: number
  /** Lines the emulator keeps above the screen (the scrollback the tests read). */
  scrollback?: number
}

export interface Exit {
  exitCode: number
  signal?: number
}

export class TerminalDriver {
  readonly pty: IPty
  readonly term: XTerm
  readonly exited: Promise<Exit>
  /** Every byte the program wrote, in order (for assertions on what reached the terminal at all). */
  raw = ''
  title = ''
  private exit: Exit | undefined
  private waiters = new Set<() => void>()

  constructor(file: string, args: string[], options: DriveOptions) {
    const cols = options.cols ?? 100
    const rows = options.rows ?? 30
    this.term = new Terminal({ cols, rows, scrollback: options.scrollback ?? 5000, allowProposedApi: true })
    this.term.onTitleChange((title) => (this.title = title))
    this.pty = spawn(file, args, { name: 'xterm-256color', cols, rows, cwd: options.cwd, env: options.env })
    this.pty.onData((data) => {
      this.raw += data
      this.term.write(data, () => this.wake())
    })
    this.exited = new Promise((resolve) =>
      this.pty.onExit((exit) => {
        this.exit = exit
        // Let the emulator take the last bytes before anyone reads the screen.
        this.term.write('', () => {
          this.wake()
          resolve(exit)
        })
      }),
    )
  }

  /** The visible screen, one string per row, right-trimmed. */
  screen(): string[] {
    const buffer = this.term.buffer.active
    const out: string[] = []
    for (let y = 0; y < this.term.rows; y++)
      out.push(buffer.getLine(buffer.viewportY + y)?.translateToString(true) ?? '')
    return out
  }

  /** The scrollback and the screen, as text. */
  text(): string {
    const buffer = this.term.buffer.active
    const out: string[] = []
    for (let y = 0; y < buffer.length; y++) out.push(buffer.getLine(y)?.translateToString(true) ?? '')
    return out.join('\n')
  }

  /** Resolves once `check` holds for the text (scrollback and screen); rejects with the screen after the timeout. */
  async waitFor(
    check: string | RegExp | ((text: string) => boolean),
    what?: string,
    timeoutMs = 45_000,
  ): Promise<string> {
    const test =
      typeof check === 'string'
        ? (text: string) => text.includes(check)
        : check instanceof RegExp
          ? (text: string) => check.test(text)
          : check
    const label = what ?? String(check)
    return new Promise((resolve, reject) => {
      const attempt = () => {
        const text = this.text()
        if (test(text)) {
          done()
          resolve(text)
        } else if (this.exit) {
          done()
          reject(
            new Error(
              `the program exited (${this.exit.exitCode}) before ${label}; screen:\n${this.screen().join('\n')}`,
            ),
          )
        }
      }
      const timer = setTimeout(() => {
        done()
        reject(new Error(`timed out waiting for ${label}; screen:\n${this.screen().join('\n')}`))
      }, timeoutMs)
      const done = () => {
        clearTimeout(timer)
        this.waiters.delete(attempt)
      }
      this.waiters.add(attempt)
      attempt()
    })
  }

  /** Sends keys or text as typed. */
  type(data: string): void {
    this.pty.write(data)
  }

  resize(cols: number, rows: number): void {
    this.pty.resize(cols, rows)
    this.term.resize(cols, rows)
  }

  /** Ends the program if it is still running and frees the emulator. */
  async dispose(): Promise<void> {
    if (!this.exit) {
      this.pty.kill('SIGKILL')
      await this.exited
    }
    this.term.dispose()
  }

  private wake(): void {
    for (const waiter of this.waiters) waiter()
  }
}

/** Starts `file args` in a pseudo-terminal of `cols`×`rows` (100×30 unless given). */
export function drive(file: string, args: string[], options: DriveOptions): TerminalDriver {
  return new TerminalDriver(file, args, options)
}
