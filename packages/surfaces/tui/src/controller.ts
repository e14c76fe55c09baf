// The TUI's model of the screen: the session it shows (through the one display fold), what is already in the
// scrollback, what the live region holds, the approval waiting for a key. It acts only through the services
// every surface uses (ctx.agents, ctx.approval, ctx.commands, plan mode), as actor `user:tui`
// (docs/architecture.md, "Surfaces").
import { readdirSync } from 'node:fs'
import { resolve, sep } from 'node:path'
import type { Context } from '@dsh/cordis'
import type { Agent } from '@dsh/agent'
import type { ApprovalAnswer, ApprovalRequest } from '@dsh/approval'
import type { CommandInfo } from '@dsh/commands'
import type { Session, SessionEvent, SessionSummary } from '@dsh/session'
import { SessionView, type Item } from '@dsh/session-view'
import { sessionUsage } from '@dsh/usage-kit'
import type {} from '@dsh/tools'
import type {} from '@dsh/token-meter'
import type {} from '@dsh/usage-prices'
import type PlanMode from '@dsh/plan-mode'
import type { Config } from './config.ts'
import { drawnElsewhere, finished, itemLines, type Line, type LineOptions } from './lines.ts'
import { oneLine, printable, tokens } from './text.ts'
import { History } from './history.ts'

export const ACTOR = 'user:tui'

/** A block of lines written once to the scrollback. */
export interface Entry {
  key: string
  lines: Line[]
}

export interface PendingApproval {
  request: ApprovalRequest
  resolve(answer: ApprovalAnswer): void
}

export interface Snapshot {
  entries: readonly Entry[]
  live: readonly Item[]
  approval: PendingApproval | undefined
  running: boolean
  planMode: boolean
  sessionId: string | undefined
  route: string
  /** The resume picker's rows while it is open. */
  picker: SessionSummary[] | undefined
  /** A Ctrl+C was pressed once: the next one exits. */
  exitArmed: boolean
}

/** Commands the TUI answers itself (not in ctx.commands): shown in completion and /help with the others. */
const LOCAL_COMMANDS: CommandInfo[] = [
  { name: 'usage', description: 'Context meter, tokens, cost and cache share of this session.', origin: 'tui' },
  { name: 'exit', description: 'Leave the TUI (the session is stored; a running turn is cancelled).', origin: 'tui' },
]

export const KEY_HELP = [
  'Keys: Enter send · Alt+Enter or Ctrl+J new line · ↑/↓ history · Tab complete · Esc cancel the turn',
  '      Shift+Tab plan mode · Ctrl+D (empty input) or Ctrl+C twice exit · approvals: y once, s session, a always, n reject',
]

export class TuiController {
  private view = new SessionView()
  private agent: Agent | undefined
  private prefix = 0
  private readonly written = new Set<string>()
  private entries: Entry[] = []
  private readonly approvals: PendingApproval[] = []
  private listeners = new Set<() => void>()
  private snapshot: Snapshot
  private notes = 0
  private pendingPlan = false
  private exitArmedAt = 0
  private commandCache: CommandInfo[] = LOCAL_COMMANDS
  private serviceCommands = new Set<string>()
  private readonly folderCache = new Map<string, { name: string; dir: boolean }[]>()
  readonly history: History
  readonly lineOptions: LineOptions

  constructor(
    private readonly ctx: Context,
    private readonly config: Config,
    private readonly cwd: string,
  ) {
    this.history = new History(ctx.app.home, cwd, config.historyLimit)
    this.lineOptions = {
      outputLines: config.outputLines,
      diffLines: config.diffLines,
      summaryChars: config.summaryChars,
      describe: (name, args) => this.describe(name, args),
      now: () => Date.now(),
    }
    this.snapshot = this.build(undefined)
    ctx.on('session/event', (session, event) => {
      if (session === this.agent?.session) this.apply(event)
    })
    ctx.on('agent/status', (agent) => {
      if (agent === this.agent) this.changed()
    })
    ctx.approval.answerer(ctx, (request, signal) => this.ask(request, signal), { actor: ACTOR })
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  getSnapshot = (): Snapshot => this.snapshot

  get session(): Session | undefined {
    return this.agent?.session
  }

  /** A line of the TUI's own (command output, an error, help), written to the scrollback now. */
  note(text: string, tone: Line['tone'] = 'muted'): void {
    this.entries = [
      ...this.entries,
      {
        key: `note-${++this.notes}`,
        lines: printable(text)
          .split('\n')
          .map((line) => ({ text: line, tone })),
      },
    ]
    this.changed()
  }

  /** Opens a stored session: its transcript is folded and written to the scrollback, then it runs here. */
  async openSession(id: string): Promise<void> {
    this.closePicker()
    const agent = await this.ctx.agents.resume(id)
    this.attach(agent)
  }

  async showPicker(): Promise<void> {
    const all = await this.ctx.sessions.list()
    const here = all.filter((summary) => summary.cwd === this.cwd && !summary.archived)
    if (!here.length) {
      this.note('No stored sessions in this folder: starting a new one.')
      return
    }
    here.sort((a, b) => b.updatedAt - a.updatedAt)
    this.snapshot = { ...this.snapshot, picker: here.slice(0, this.config.pickerRows) }
    this.emit()
  }

  closePicker(): void {
    if (!this.snapshot.picker) return
    this.snapshot = { ...this.snapshot, picker: undefined }
    this.emit()
  }

  /** The commands `/` completes: the session's (built-ins, plugins', user commands, skills) and the TUI's own. */
  commands(): CommandInfo[] {
    return this.commandCache
  }

  async refreshCommands(): Promise<void> {
    const service = this.ctx.get('commands')
    const listed = service ? await service.list(this.cwd) : []
    const names = (this.serviceCommands = new Set(listed.map((command) => command.name)))
    this.commandCache = [...listed, ...LOCAL_COMMANDS.filter((command) => !names.has(command.name))]
    this.changed()
  }

  /**
   * The workspace's entries that complete `partial` (`src/ma` → `src/main.ts`), directories with a trailing
   * slash; nothing outside the workspace, no dot-files unless asked for, no `node_modules`. Read once per folder
   * until the next send.
   */
  files(partial: string): { path: string; dir: boolean }[] {
    const slash = partial.lastIndexOf('/')
    const folder = partial.slice(0, slash + 1)
    const base = partial.slice(slash + 1)
    const absolute = resolve(this.cwd, folder)
    if (absolute !== this.cwd && !absolute.startsWith(this.cwd + sep)) return []
    let entries = this.folderCache.get(absolute)
    if (!entries) {
      try {
        entries = readdirSync(absolute, { withFileTypes: true })
          .filter((entry) => entry.name !== 'node_modules' && entry.name !== '.git')
          .map((entry) => ({ name: entry.name, dir: entry.isDirectory() }))
          .sort((a, b) => a.name.localeCompare(b.name))
      } catch {
        entries = []
      }
      this.folderCache.set(absolute, entries)
    }
    return entries
      .filter((entry) => entry.name.startsWith(base) && (base.startsWith('.') || !entry.name.startsWith('.')))
      .slice(0, this.config.completionRows * 4)
      .map((entry) => ({ path: `${folder}${printable(entry.name)}${entry.dir ? '/' : ''}`, dir: entry.dir }))
  }

  forgetFiles(): void {
    this.folderCache.clear()
  }

  /** What the user typed: a slash command, or a message to the agent. */
  async submit(text: string): Promise<void> {
    if (!text.trim()) return
    this.history.add(text)
    const word = /^\/([a-z][a-z0-9_-]*)(?:\s|$)/.exec(text)?.[1]
    if (word === 'exit') return this.exit()
    if (word === 'usage' && !this.serviceCommands.has('usage')) return this.note(this.usageText(), 'accent')
    const agent = await this.ensureAgent()
    if (!agent) return
    if (word) {
      const service = this.ctx.get('commands')
      const outcome = service ? await service.run(agent, text) : { handled: false as const }
      if (outcome.handled) {
        if ('error' in outcome) return this.note(`/${outcome.name}: ${outcome.error.message}`, 'error')
        if (outcome.name === 'help') this.note(KEY_HELP.join('\n'), 'muted')
        if (outcome.output) this.note(outcome.output, 'accent')
        if (outcome.sessionId && outcome.sessionId !== agent.session.id) {
          const opened =
            this.ctx.agents.bySession(outcome.sessionId) ?? (await this.ctx.agents.resume(outcome.sessionId))
          this.attach(opened)
        }
        if (outcome.prompt !== undefined) this.agent!.followup(outcome.prompt)
        return
      }
      if (outcome.unknown)
        this.note(
          `/${outcome.unknown} is not a command here: it was sent to the model as text (/help lists the commands).`,
          'warn',
        )
    }
    agent.followup(text)
  }

  /** Esc: cancels the running turn (its end is logged `aborted`, the card shows it interrupted). */
  cancel(): boolean {
    if (!this.agent?.running) return false
    this.agent.cancel('cancelled from the terminal')
    return true
  }

  answer(answer: ApprovalAnswer): void {
    const pending = this.approvals[0]
    if (!pending) return
    // A grant answer needs the request's rule; without one only once and reject are offered.
    if ((answer === 'allow_session' || answer === 'allow_always') && !pending.request.rule) return
    this.approvals.shift()
    pending.resolve(answer)
    this.changed()
  }

  /** Shift+Tab: plan mode on or off for this session (logged `plan/mode` by the plan-mode plugin). */
  togglePlan(): void {
    const planMode = this.ctx.get('planMode') as PlanMode | undefined
    if (!planMode) return this.note('Plan mode is not mounted in this profile.', 'warn')
    const session = this.agent?.session
    if (!session) {
      this.pendingPlan = !this.pendingPlan
      return this.changed()
    }
    if (planMode.active(session)) planMode.exit(session, ACTOR)
    else planMode.enter(session, ACTOR)
  }

  /** Ctrl+C: the first arms, a second within `exitWindowMs` exits. Returns whether it exits. */
  interruptKey(): boolean {
    const now = Date.now()
    if (now - this.exitArmedAt < this.config.exitWindowMs) {
      this.ctx.app.requestExit(0)
      return true
    }
    this.exitArmedAt = now
    this.changed()
    setTimeout(() => this.changed(), this.config.exitWindowMs).unref()
    return false
  }

  /** Resolves once no turn runs in the session shown (at once when there is none). */
  async whenIdle(): Promise<void> {
    await this.agent?.whenIdle()
  }

  /** Ctrl+D on an empty input, `/exit`. */
  exit(): void {
    this.ctx.app.requestExit(0)
  }

  /** Closing the TUI: a running turn is cancelled and its end made durable (the decision note says why). */
  async drain(): Promise<void> {
    for (const pending of this.approvals.splice(0)) pending.resolve('reject')
    const agent = this.agent
    if (!agent) return
    if (agent.running) agent.cancel('the terminal UI was closed')
    await agent.whenIdle()
    await agent.session.flush()
  }

  private async ensureAgent(): Promise<Agent | undefined> {
    if (this.agent) return this.agent
    const route = this.ctx.agents.defaultRoute()
    try {
      const ready = await this.ctx.llm.adapter(route.provider).ready?.(route)
      if (ready && !ready.ok) {
        this.note(`${route.provider}/${route.model} cannot be used: ${ready.error.message}`, 'error')
        return undefined
      }
    } catch (error) {
      this.note(error instanceof Error ? error.message : String(error), 'error')
      return undefined
    }
    const agent = await this.ctx.agents.create({ cwd: this.cwd })
    this.attach(agent)
    if (this.pendingPlan) {
      ;(this.ctx.get('planMode') as PlanMode | undefined)?.enter(agent.session, ACTOR)
      this.pendingPlan = false
    }
    return agent
  }

  private attach(agent: Agent): void {
    if (this.agent && this.agent !== agent) this.note(`── now in session ${agent.session.id}`)
    this.agent = agent
    this.view = new SessionView()
    this.prefix = 0
    for (const event of agent.session.events) this.view.apply(event)
    // Nobody else runs it: a call its last run left open shows interrupted, not spinning.
    if (!agent.running) this.view.settle()
    this.flush()
    this.changed()
  }

  private apply(event: SessionEvent): void {
    const changes = this.view.apply(event)
    if (changes.some((change) => change.op === 'removed')) {
      const index = this.view.items.findIndex((item) => !this.written.has(item.key))
      this.prefix = index < 0 ? this.view.items.length : index
    }
    if (!changes.length) return
    this.flush()
    this.changed()
  }

  /** Moves the finished items at the head of the live region to the scrollback, in order. */
  private flush(): void {
    const items = this.view.items
    const added: Entry[] = []
    while (this.prefix < items.length && finished(items[this.prefix]!)) {
      const item = items[this.prefix++]!
      if (this.written.has(item.key)) continue
      this.written.add(item.key)
      // A call another item draws (a `task` call, drawn as its subagent's card) gets no entry of its own.
      if (!drawnElsewhere(item)) added.push({ key: item.key, lines: itemLines(item, this.lineOptions) })
    }
    if (added.length) this.entries = [...this.entries, ...added]
  }

  private ask(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
    return new Promise((resolve) => {
      const pending: PendingApproval = {
        request,
        resolve: (answer) => {
          signal.removeEventListener('abort', onAbort)
          resolve(answer)
        },
      }
      // A cancelled turn takes its question away: the approval service logs the refusal itself.
      const onAbort = () => {
        const at = this.approvals.indexOf(pending)
        if (at >= 0) this.approvals.splice(at, 1)
        resolve('reject')
        this.changed()
      }
      signal.addEventListener('abort', onAbort, { once: true })
      this.approvals.push(pending)
      this.changed()
    })
  }

  private usageText(): string {
    const session = this.agent?.session
    if (!session) return 'No session yet: nothing used.'
    const prices = this.ctx.get('usagePrices')?.table() ?? {}
    const usage = sessionUsage(session.events, prices)
    const meter = this.ctx.get('tokenMeter')
    const pressure = meter?.pressure(session)
    const context =
      pressure && pressure.window
        ? `context ${Math.round(pressure.ratio * 100)}% (${tokens(pressure.tokens)} of ${tokens(pressure.window)} tokens)`
        : pressure
          ? `context ${tokens(pressure.tokens)} tokens (window unknown)`
          : 'context meter not mounted'
    const input = usage.input + usage.cacheRead + usage.cacheWrite
    const cache = usage.cacheHitShare === null ? '' : ` (${Math.round(usage.cacheHitShare * 100)}% cached)`
    const cost =
      usage.cost === null ? `cost unknown (no price for ${usage.unpriced.join(', ')})` : `$${usage.cost.toFixed(4)}`
    return `${context} · ${usage.requests} request${usage.requests === 1 ? '' : 's'} · ${tokens(input)} in${cache}, ${tokens(usage.output)} out · ${cost}`
  }

  private describe(name: string, args: unknown): string {
    let summary: string | undefined
    try {
      summary = this.agent ? this.ctx.tools.resolve(name, this.agent.id)?.tool.summarize?.(args) : undefined
    } catch {
      // A summary is a courtesy: a tool whose summarize() throws on odd arguments is shown raw.
    }
    if (summary !== undefined) return summary.startsWith(name) ? summary : `${name}: ${summary}`
    const first =
      args && typeof args === 'object' ? Object.values(args).find((value) => typeof value === 'string') : undefined
    return `${name} ${oneLine(typeof first === 'string' ? first : (JSON.stringify(args) ?? ''), this.config.summaryChars)}`
  }

  private build(picker: SessionSummary[] | undefined): Snapshot {
    const planMode = this.ctx.get('planMode') as PlanMode | undefined
    const session = this.agent?.session
    const route = this.agent?.route ?? this.ctx.agents.defaultRoute()
    return {
      entries: this.entries,
      live: this.view.items.slice(this.prefix).filter((item) => !drawnElsewhere(item)),
      approval: this.approvals[0],
      running: !!this.agent?.running || this.view.openTurn,
      planMode: session && planMode ? planMode.active(session) : this.pendingPlan,
      sessionId: session?.id,
      route: `${route.provider}/${route.model}${route.effort ? ` (${route.effort})` : ''}`,
      picker,
      exitArmed: Date.now() - this.exitArmedAt < this.config.exitWindowMs,
    }
  }

  private changed(): void {
    this.snapshot = this.build(this.snapshot?.picker)
    this.emit()
  }

  private emit(): void {
    for (const listener of this.listeners) listener()
  }
}
