import type {
  AnySessionEvent,
  CommandInfo,
  PromptContent,
  RouteParam,
  Route,
  SessionChangesResult,
  SessionCommandResult,
  SessionRewindResult,
  SessionViewResult,
  TurnEndReason,
} from '@dsh/sdk-protocol'
import { SessionView, type TurnEndItem } from '@dsh/session-view'
import { AsyncQueue } from './queue.ts'
import type { ApprovalCallback, ClientToolSpec, Harness } from './harness.ts'

/** What one prompt came to. */
export interface RunResult {
  sessionId: string
  /** The receipt the runtime gave the prompt. */
  messageId: string
  /** The last text the model wrote in the run (empty when it wrote none). */
  text: string
  /** How the (last) turn ended: `completed`, `aborted`, `error`, `max-steps`, … */
  reason: TurnEndReason
  error?: { code: string; message: string }
  /** Every event the run committed, in log order. */
  events: AnySessionEvent[]
  /** Tokens of the run's model requests as logged (turns, compaction, the title; `input` excludes cache reads and writes). */
  usage: RunUsage
  /** USD from the runtime's price table (`usage.prices` over the shipped prices); null when a model had no price. */
  cost: number | null
  /** USD the provider's prompt cache saved in this run (cache reads at the input price less their cached price); null when unpriced. */
  cacheSaved: number | null
  /** The `provider/model`s of the run without a price. */
  unpriced: string[]
  /** From sending the prompt to the session being idle again. */
  durationMs: number
}

export interface RunUsage {
  requests: number
  input: number
  cacheRead: number
  cacheWrite: number
  output: number
  /** Cached input tokens / all input tokens, as the provider reported them; null with no input. */
  cacheHitShare: number | null
}

/** What a slash command came to (`session/command`), with the run of a user command's prompt. */
export interface CommandResult extends SessionCommandResult {
  run?: RunResult
  newSession?: Session
}

export interface RunOptions {
  /** Aborting cancels the running turn (the run still resolves, with reason `aborted`). */
  signal?: AbortSignal
  /** Steps (model requests) this run's turn may take, in place of the runtime's `agent.maxSteps` setting. */
  maxSteps?: number
  /** From this run on, only these tools are offered and run (a logged filter that stays until another is set). */
  allowedTools?: string[]
  /** From this run on, these tools are neither offered nor run. */
  disallowedTools?: string[]
}

/** One session of the runtime. Runs on one Session object are serialized: each waits for the one before. */
export class Session {
  /** Answers approvals of this session (instead of the harness's callback). */
  onApproval: ApprovalCallback | undefined
  /** The handlers of the tools this program registered for the session, by name. */
  readonly tools = new Map<string, ClientToolSpec>()
  private queue: Promise<void> = Promise.resolve()

  constructor(
    private readonly harness: Harness,
    readonly id: string,
  ) {}

  /** Sends a prompt and resolves once the session is idle again, with the final text, the events and the reason. */
  async run(prompt: PromptContent, options: RunOptions = {}): Promise<RunResult> {
    const started = performance.now()
    const receipt: { messageId?: string } = {}
    const events: AnySessionEvent[] = []
    for await (const event of this.turn(() => this.sendPrompt(prompt, options), options, receipt)) events.push(event)
    return this.summarize(receipt.messageId!, events, performance.now() - started)
  }

  /**
   * Runs a slash command as a user types it (`/fix-issue 123`). A user command's expanded prompt runs as a
   * turn and `run` is its result; `/clear` and `/fork` give the session to continue in as `newSession`. An
   * unknown `/word` runs and sends nothing (`unknown` names it): send it with `run` to give it to the model.
   */
  async command(line: string, options: RunOptions = {}): Promise<CommandResult> {
    const started = performance.now()
    const receipt: { messageId?: string; result?: SessionCommandResult } = {}
    const events: AnySessionEvent[] = []
    const send = async () =>
      (receipt.result = await this.harness.request('session/command', { sessionId: this.id, line })).messageId
    for await (const event of this.turn(send, options, receipt)) events.push(event)
    const result = receipt.result!
    return {
      ...result,
      ...(receipt.messageId
        ? { run: await this.summarize(receipt.messageId, events, performance.now() - started) }
        : {}),
      ...(result.newSessionId ? { newSession: this.harness.attach(result.newSessionId) } : {}),
    }
  }

  /**
   * The run's result: text and reason as the shared display fold shows them, usage and cost as the runtime
   * folds the log (`session/usage`, the numbers of `dsh usage`), so no client sums tokens its own way.
   */
  private async summarize(messageId: string, events: AnySessionEvent[], durationMs: number): Promise<RunResult> {
    const fromSeq = events[0]?.seq
    const { cost, cacheSaved, unpriced, ...usage } =
      fromSeq === undefined
        ? {
            requests: 0,
            input: 0,
            cacheRead: 0,
            cacheWrite: 0,
            output: 0,
            cacheHitShare: null,
            cost: 0,
            cacheSaved: 0,
            unpriced: [],
          }
        : await this.harness.request('session/usage', { sessionId: this.id, fromSeq })
    return {
      ...outcome(this.id, messageId, events),
      usage,
      cost,
      cacheSaved,
      unpriced,
      durationMs: Math.round(durationMs),
    }
  }

  /** The slash commands of this session's workspace (built-ins, plugins', user Markdown commands). */
  async commands(): Promise<CommandInfo[]> {
    return (await this.harness.request('session/commands', { sessionId: this.id })).commands
  }

  /** The files this session changed, each with its diff, against the state before turn `fromTurn` (default: before the session). */
  /**
   * What the session shows, folded by the runtime (`session/view`): the same `SessionView` fold as folding
   * `events()` here, settled when no turn runs; `fromSeq` keeps the items created from there on.
   */
  async view(options: { fromSeq?: number } = {}): Promise<SessionViewResult> {
    return this.harness.request('session/view', {
      sessionId: this.id,
      ...(options.fromSeq !== undefined ? { fromSeq: options.fromSeq } : {}),
    })
  }

  async changes(options: { fromTurn?: number } = {}): Promise<SessionChangesResult> {
    return this.harness.request('session/changes', {
      sessionId: this.id,
      ...(options.fromTurn !== undefined ? { fromTurn: options.fromTurn } : {}),
    })
  }

  /**
   * Restores every file this session touched to its state before turn `toTurn`. A file changed since by
   * someone else is reported in `conflicts`, not overwritten, unless `force`; `fork` also forks the conversation there.
   */
  async rewind(toTurn: number, options: { force?: boolean; fork?: boolean } = {}): Promise<SessionRewindResult> {
    return this.harness.request('session/rewind', { sessionId: this.id, toTurn, ...options })
  }

  /**
   * Sends a prompt and yields each committed event as it arrives, until the session is idle again. Leaving
   * the loop early (`break`, a throw) cancels the turn and waits for it to end, so none of its events reach
   * the session's next run.
   */
  stream(prompt: PromptContent, options: RunOptions = {}): AsyncGenerator<AnySessionEvent> {
    return this.turn(() => this.sendPrompt(prompt, options), options, {})
  }

  /** Cancels the running turn; resolves whether one was running. */
  async cancel(): Promise<boolean> {
    return (await this.harness.request('session/cancel', { sessionId: this.id })).wasRunning
  }

  /** Switches the model from the next request on (a logged fact). A bare model keeps the provider. */
  async setModel(route: RouteParam): Promise<Route> {
    return (await this.harness.request('session/setModel', { sessionId: this.id, route })).route
  }

  async setPermission(preset: string): Promise<void> {
    await this.harness.request('session/setPermission', { sessionId: this.id, preset })
  }

  /** Enters (true) or leaves (false) plan mode, as the program's user; resolves whether the session is in it. */
  async setPlanMode(active: boolean): Promise<boolean> {
    return (await this.harness.request('session/setPlanMode', { sessionId: this.id, active })).active
  }

  /** The whole stored log, read page by page. */
  async events(): Promise<AnySessionEvent[]> {
    const all: AnySessionEvent[] = []
    let fromSeq: number | null = 0
    while (fromSeq !== null) {
      const page: { events: AnySessionEvent[]; nextSeq: number | null } = await this.harness.request('session/events', {
        sessionId: this.id,
        fromSeq,
      })
      all.push(...page.events)
      fromSeq = page.nextSeq
    }
    return all
  }

  /** A new session holding this one's events up to `atSeq` (a turn boundary). */
  fork(atSeq: number): Promise<Session> {
    return this.harness.fork(this.id, atSeq)
  }

  private async sendPrompt(prompt: PromptContent, options: RunOptions): Promise<string> {
    const { maxSteps, allowedTools, disallowedTools } = options
    const params = {
      sessionId: this.id,
      content: prompt,
      ...(maxSteps !== undefined ? { maxSteps } : {}),
      ...(allowedTools ? { allowedTools } : {}),
      ...(disallowedTools ? { disallowedTools } : {}),
    }
    return (await this.harness.request('session/prompt', params)).messageId
  }

  /** Sends (`send` resolves with the receipt, or undefined when nothing was queued) and yields the run's events. */
  private async *turn(
    send: () => Promise<string | undefined>,
    options: RunOptions,
    receipt: { messageId?: string },
  ): AsyncGenerator<AnySessionEvent> {
    const release = await this.lock()
    const queue = new AsyncQueue<AnySessionEvent>()
    // `idle` ends the run only once a turn started after we subscribed: an earlier turn's idle is not ours.
    let started = false
    let idle!: () => void
    const whenIdle = new Promise<void>((resolve) => (idle = resolve))
    const stop = this.harness.listen((method, params) => {
      if (params.sessionId !== this.id) return
      if (method === 'session.event') {
        const event = (params as { event: AnySessionEvent }).event
        if (event.type === 'turn/start') started = true
        queue.push(event)
      } else if (method === 'session.status' && (params as { status: string }).status === 'idle' && started) {
        queue.end()
        idle()
      }
    })
    const unclosed = this.harness.onClose((error) => {
      queue.fail(error)
      idle()
    })
    const onAbort = () => void this.cancel().catch(() => {})
    options.signal?.addEventListener('abort', onAbort, { once: true })
    let consumed = false
    try {
      receipt.messageId = await send()
      if (receipt.messageId === undefined) queue.end()
      if (options.signal?.aborted) onAbort()
      yield* queue
      consumed = true
    } finally {
      // The caller left before the turn ended: cancel it and wait until it has, still holding the session's
      // lock, so the abandoned turn's remaining events are not taken for the next run's.
      if (!consumed && receipt.messageId !== undefined) {
        await this.cancel().catch(() => false)
        await whenIdle
      }
      options.signal?.removeEventListener('abort', onAbort)
      unclosed()
      stop()
      release()
    }
  }

  private async lock(): Promise<() => void> {
    const before = this.queue
    let release!: () => void
    this.queue = new Promise((resolve) => (release = resolve))
    await before
    return release
  }
}

/** The run's text, reason and error as the display fold every surface shares (@dsh/session-view) shows them. */
function outcome(
  sessionId: string,
  messageId: string,
  events: AnySessionEvent[],
): Pick<RunResult, 'sessionId' | 'messageId' | 'text' | 'reason' | 'error' | 'events'> {
  const view = SessionView.fold(events)
  let text = ''
  let end: TurnEndItem | undefined
  for (let at = view.items.length - 1; at >= 0 && (!text || !end); at--) {
    const item = view.items[at]!
    if (item.kind === 'assistant' && !text) text = item.text
    else if (item.kind === 'turn-end' && !end) end = item
  }
  const error = end?.loggedError
  return {
    sessionId,
    messageId,
    text,
    reason: (end?.reason ?? 'interrupted') as TurnEndReason,
    ...(error ? { error } : {}),
    events,
  }
}
