import { realpathSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Context } from '@dsh/cordis'
import type { DrainReason } from '@dsh/app'
import type { Agent } from '@dsh/agent'
import type {} from '@dsh/approval'
import { UsageError } from '@dsh/cmdline'
import { LlmError, type Route } from '@dsh/llm'
import type { PermissionPresets } from '@dsh/permission-presets'
import type { AgentPresets } from '@dsh/agent-presets'
import type PlanMode from '@dsh/plan-mode'
import { readMcpConfig } from './mcp-config.ts'
import type { Session, SessionEvent } from '@dsh/session'
import type { Config } from './config.ts'
import { routeTask } from './command-task.ts'
import { jsonLine } from './json-lines.ts'
import type { ResultLine, RunRefusal } from '@dsh/headless-lines'
import { loadOutputSchema, retryInstruction, withOutputInstruction, type OutputSchema } from './output-schema.ts'
import { resultLine } from './result-line.ts'
import type { PriceTable } from '@dsh/usage-kit'
import type { RunInvocation } from './options.ts'
import { Progress } from './progress.ts'
import { oneLine, summarizeArguments, printable } from './text.ts'

/** Where a run writes: stdout gets the answer (or `--json` lines), stderr everything for people. */
export interface RunIO {
  stdout: { write(text: string): unknown; isTTY?: boolean }
  stderr: { write(text: string): unknown; isTTY?: boolean }
  /** The task from stdin, or undefined when stdin is a terminal. Rejects when `signal` aborts. */
  readStdin(signal: AbortSignal): Promise<string | undefined>
  /** Asks a yes/no question on the terminal; absent when stdin or stderr is not one (nobody to ask). */
  confirm?(question: string): Promise<boolean>
}

/** A run ended for a reason the user must see: one line on stderr, then this exit code. */
export class RunFailure extends Error {
  override name = 'RunFailure'
  constructor(
    readonly exitCode: number,
    message: string,
  ) {
    super(message)
  }
}

/** A refused approval: the model may carry on without it, but the run did not do what was asked. */
type Refusal = RunRefusal

/**
 * One headless run (`dsh "task"`, `--resume`, `--fork`): opens the session, checks the model can be reached,
 * applies the run's options to the agent (route, permission preset, approval answerer, step limit), sends
 * the task, waits until the agent is idle and reports. `interrupt()` is the SIGINT path: it cancels the turn
 * and waits until its `turn/end` is logged and flushed.
 */
export class HeadlessRun {
  private readonly stop = new AbortController()
  private opening: Promise<Agent> | undefined
  private agent: Agent | undefined
  private turnStarted = false
  private interruptedBy: DrainReason | undefined
  private readonly startedAt = performance.now()
  private readonly refusals: Refusal[] = []
  /** The run's session and the first seq it appended (the result line counts from there). */
  private mine: Session | undefined
  private firstSeq: number | undefined
  private finalText = ''
  private structured: { value: unknown } | undefined

  constructor(
    private readonly ctx: Context,
    private readonly config: Config,
    private readonly invocation: RunInvocation,
    private readonly io: RunIO,
  ) {}

  /** Runs to the end and returns the exit code (RunFailure and UsageError are thrown for the caller to print). */
  async execute(): Promise<number> {
    const { ctx, invocation, io } = this
    const task = invocation.task ?? (await this.taskFromStdin())
    if (this.stop.signal.aborted) return this.interrupted()
    if (!task) throw new UsageError('no task: give it as an argument (dsh "fix the failing test") or on stdin')
    const outputSchema =
      invocation.outputSchema !== undefined ? loadOutputSchema(ctx.app.cwd, invocation.outputSchema) : undefined

    const refusals = this.refusals
    const progress =
      io.stderr.isTTY && !invocation.quiet
        ? new Progress(
            (text) => io.stderr.write(`${printable(text)}\n`),
            (name, args) => this.describeCall(name, args),
            this.config.summaryChars,
            this.config.progressOutputLines,
            this.ctx.get('usagePrices')?.table() ?? {},
          )
        : undefined
    // First among the listeners: others may append to a new session from theirs (model-routes logs its route).
    const watchOpen = ctx.on('session/opened', (session) => void (this.mine ??= session), { prepend: true })
    const watchEvents = ctx.on('session/event', (session, event) => {
      if (session !== this.mine) return
      this.firstSeq ??= event.seq
      if (invocation.json) io.stdout.write(jsonLine(session.id, event))
      progress?.event(event)
      if (event.type === 'approval/decided') this.noteDecision(session, event, refusals)
    })
    try {
      const presets = this.permissionPresets()
      const agentPresets = this.agentPresets()
      const planMode = this.planMode()
      const mcpServers = readMcpConfig(ctx, invocation.mcpConfig)
      // Checked before the session is opened: a run refused for a missing key creates (or forks) nothing.
      const base = await this.startingRoute()
      const route = await this.checkRoute(base)
      if (this.stop.signal.aborted) return this.interrupted()
      const agent = (this.agent = await (this.opening = this.open(sameRoute(route, base) ? undefined : route)))
      if (presets && invocation.permission !== undefined)
        presets.set(agent.session, invocation.permission, 'user:cli-flag')
      if (agentPresets && invocation.agentPreset !== undefined)
        agentPresets.choose(agent.session, invocation.agentPreset, 'user:cli-flag')
      planMode?.enter(agent.session, 'user:cli-flag')
      if (mcpServers.length) ctx.get('mcp')!.attach(agent.session, mcpServers)
      // On the agent's scope: the answerer ends with the agent.
      if (invocation.approve)
        ctx.approval.answerer(
          agent.scope,
          async (request) => (request.sessionId === agent.session.id ? 'allow_once' : 'reject'),
          { actor: 'user:cli-flag' },
        )
      if (this.stop.signal.aborted) return this.interrupted()

      const routing = await routeTask(ctx, agent, task, io, { json: !!invocation.json, quiet: !!invocation.quiet })
      if ('done' in routing) {
        if (routing.failed) throw new RunFailure(1, routing.failed)
        return 0
      }
      agent.followup(outputSchema ? withOutputInstruction(routing.send, outputSchema) : routing.send)
      this.turnStarted = true
      let result = await agent.whenIdle()
      if (this.interruptedBy) return this.interrupted()
      if (!result) throw new RunFailure(1, 'the agent ended without a result')
      this.finalText = result.text
      if (outputSchema && result.reason === 'completed') {
        result = await this.structuredAnswer(agent, outputSchema, result)
        if (this.interruptedBy) return this.interrupted()
      }
      // On a terminal the answer is shown as text only; a pipe gets the model's bytes as they are.
      const answer = io.stdout.isTTY ? printable(result.text) : result.text
      if (!invocation.json && answer) io.stdout.write(answer.endsWith('\n') ? answer : `${answer}\n`)
      if (result.reason !== 'completed') {
        const why = result.error ? `${result.error.message} (${result.error.code})` : 'no error was recorded'
        throw new RunFailure(1, `the turn ended ${result.reason}: ${why}; session ${agent.session.id}`)
      }
      const refused = refusals[0]
      if (refused) {
        const session = agent.session.id
        // Each refusal was printed as it happened: the closing line sums up instead of repeating the first.
        if (!invocation.quiet) {
          const count = refusals.length === 1 ? 'an approval was' : `${refusals.length} approvals were`
          throw new RunFailure(1, `${count} refused, so the task may be incomplete; session ${session}`)
        }
        const more = refusals.length > 1 ? ` (and ${refusals.length - 1} more)` : ''
        throw new RunFailure(
          1,
          `approval refused for ${this.label(refused)}${more}; ${this.approvalHint(refused)}; session ${session}`,
        )
      }
      return 0
    } finally {
      watchOpen()
      watchEvents()
    }
  }

  /**
   * `--output-schema`: the final answer must parse as JSON valid against the schema. One retry tells the
   * model what was wrong (a logged user message, like any follow-up); a second miss fails the run.
   */
  private async structuredAnswer(
    agent: Agent,
    schema: OutputSchema,
    first: NonNullable<Awaited<ReturnType<Agent['whenIdle']>>>,
  ) {
    let result = first
    let check = schema.check(result.text)
    if (!check.ok) {
      agent.followup(retryInstruction(check.problem, schema))
      const retried = await agent.whenIdle()
      if (!retried || this.interruptedBy) return result
      result = retried
      this.finalText = result.text
      if (result.reason !== 'completed') return result
      check = schema.check(result.text)
    }
    if (!check.ok)
      throw new RunFailure(1, `--output-schema: ${check.problem} (after one retry); session ${agent.session.id}`)
    this.structured = { value: check.value }
    return result
  }

  /** The `--json` run's last line, for whatever way the run ended (`error`: the line printed on stderr). */
  result(exitCode: number, error: { code?: string; message: string } | undefined, prices: PriceTable): ResultLine {
    const session = this.mine
    return resultLine({
      sessionId: session?.id ?? null,
      events: session ? session.events : [],
      fromSeq: this.firstSeq ?? Infinity,
      exitCode,
      text: this.finalText,
      ...(error ? { error } : {}),
      refusals: this.refusals,
      durationMs: performance.now() - this.startedAt,
      prices,
      ...(this.structured ? { structuredOutput: this.structured } : {}),
    })
  }

  /** Set once a signal interrupted the run. */
  get interruption(): DrainReason | undefined {
    return this.interruptedBy
  }

  /** The SIGINT/SIGTERM path, before the tree is disposed: cancel the turn, wait for its end to be flushed. */
  async interrupt(reason: DrainReason): Promise<void> {
    if (reason.signal === undefined) return // the run itself asked to exit: nothing is running
    this.interruptedBy = reason
    this.stop.abort()
    // An agent still being opened (a resume repairing its log) is waited for, so it is cancelled too.
    const agent = this.agent ?? (await this.opening?.catch(() => undefined))
    if (!agent) return
    agent.cancel(`interrupted by ${reason.signal}`)
    await agent.whenIdle()
    await agent.session.flush()
  }

  /** The exit after a signal; says where the work is when there is a session to come back to. */
  private interrupted(): number {
    const reason = this.interruptedBy
    const session = this.agent?.session
    if (session && !this.invocation.quiet) {
      const cancelled = this.turnStarted ? ': the turn was cancelled' : ''
      this.io.stderr.write(
        `dsh: interrupted by ${reason?.signal ?? 'a signal'}${cancelled}; session ${session.id} is saved (continue it with: dsh resume ${session.id} "…")\n`,
      )
    }
    return reason?.code ?? 130
  }

  private async taskFromStdin(): Promise<string | undefined> {
    try {
      return (await this.io.readStdin(this.stop.signal))?.trim()
    } catch (error) {
      if (this.stop.signal.aborted) return undefined
      throw error
    }
  }

  /** Opens the run's agent; `route` (the run's flags changed it) is logged as the session's next `model/route`. */
  private async open(route: Route | undefined): Promise<Agent> {
    const { ctx, invocation } = this
    const source = invocation.source
    // --max-steps is each turn's limit in this run, in place of the loop's `agent.maxSteps` setting.
    const limits = invocation.maxSteps !== undefined ? { maxSteps: invocation.maxSteps } : {}
    const options = route ? { ...limits, route } : limits
    if (source.kind === 'resume') return ctx.agents.resume(source.id, options)
    if (source.kind === 'fork') return ctx.agents.fork(source.id, source.atSeq, options)
    return ctx.agents.create({ cwd: workingDirectory(ctx.app.cwd, source.cwd), ...options })
  }

  /**
   * The route the session will be on before the run's flags, read without opening anything: a stored
   * session's last `model/route` (up to the fork point), else the default route of new sessions.
   */
  private async startingRoute(): Promise<Route> {
    const { ctx } = this
    const source = this.invocation.source
    if (source.kind === 'new') return ctx.agents.defaultRoute()
    const { events } = await ctx.sessions.read(source.id)
    const prefix = source.kind === 'fork' ? events.slice(0, source.atSeq + 1) : events
    const logged = prefix.findLast((event) => event.type === 'model/route') as SessionEvent<'model/route'> | undefined
    return logged?.data.route ?? ctx.agents.defaultRoute()
  }

  /**
   * The route after the run's `--provider/--model/--effort`, checked with the adapter's `ready()` before
   * anything is created, appended or sent: a missing key fails here, before the first request.
   */
  private async checkRoute(current: Route): Promise<Route> {
    const { ctx } = this
    const wanted = this.invocation.route
    let route: Route = { ...current }
    let adapter
    try {
      if (wanted.provider !== undefined && wanted.provider !== current.provider) {
        adapter = ctx.llm.adapter(wanted.provider)
        const model = wanted.model ?? (await adapter.models())[0]?.id
        if (!model) throw new UsageError(`--provider ${wanted.provider}: the provider lists no models; give --model`)
        route = { provider: wanted.provider, model }
      }
      if (wanted.model !== undefined) route.model = wanted.model
      if (wanted.effort !== undefined) route.effort = wanted.effort
      adapter ??= ctx.llm.adapter(route.provider)
    } catch (error) {
      if (error instanceof LlmError && error.code === 'UNKNOWN_PROVIDER')
        throw wanted.provider !== undefined ? new UsageError(error.message) : new RunFailure(1, error.message)
      throw error
    }
    const ready = await adapter.ready?.(route)
    if (ready && !ready.ok)
      throw new RunFailure(1, `${route.provider}/${route.model} cannot be used: ${ready.error.message}`)
    return route
  }

  /** The presets service when `--permission` is given and names a preset (checked before a session exists). */
  private permissionPresets(): PermissionPresets | undefined {
    const name = this.invocation.permission
    if (name === undefined) return undefined
    // Looked up, not injected: the surface also runs in compositions without presets, where only this flag fails.
    const presets = this.ctx.get('permissionPresets') as PermissionPresets | undefined
    if (!presets)
      throw new RunFailure(1, `--permission ${name}: no permission presets plugin is mounted in this profile`)
    try {
      presets.get(name)
    } catch (error) {
      if (error instanceof Error && 'code' in error && error.code === 'UNKNOWN_PRESET')
        throw new UsageError(`--permission: ${error.message}`, { cause: error })
      throw error
    }
    return presets
  }

  /** The agent presets service when `--preset` is given and names one (checked, user files too, before a session exists). */
  private agentPresets(): AgentPresets | undefined {
    const name = this.invocation.agentPreset
    if (name === undefined) return undefined
    const presets = this.ctx.get('agentPresets') as AgentPresets | undefined
    if (!presets) throw new RunFailure(1, `--preset ${name}: no agent presets plugin is mounted in this profile`)
    try {
      presets.get(name)
    } catch (error) {
      if (
        error instanceof Error &&
        'code' in error &&
        (error.code === 'UNKNOWN_AGENT_PRESET' || error.code === 'AGENT_PRESET_INVALID')
      )
        throw new UsageError(`--preset: ${error.message}`, { cause: error })
      throw error
    }
    return presets
  }

  /** Plan mode when `--plan` is given (a composition without it refuses the flag before a session exists). */
  private planMode(): PlanMode | undefined {
    if (!this.invocation.plan) return undefined
    const planMode = this.ctx.get('planMode') as PlanMode | undefined
    if (!planMode) throw new RunFailure(1, '--plan: no plan-mode plugin is mounted in this profile')
    return planMode
  }

  private noteDecision(session: Session, event: SessionEvent, refusals: Refusal[]): void {
    const decided = event.data as { requestId: string; answer: string; by: string; note?: string }
    if (decided.answer !== 'reject') return
    const asked = session
      .all('approval/asked')
      .find((candidate) => candidate.data.requestId === decided.requestId)?.data
    const refusal: Refusal = {
      tool: asked?.tool ?? 'a tool',
      summary: asked?.summary ?? '',
      by: decided.by,
      ...(decided.note ? { note: decided.note } : {}),
    }
    refusals.push(refusal)
    if (!this.invocation.quiet && !this.interruptedBy)
      this.io.stderr.write(`dsh: refused ${this.label(refusal)}; ${this.approvalHint(refusal)}\n`)
  }

  /** `bash: rm -rf build` (tools' summaries usually name the tool already). */
  private label(refusal: Refusal): string {
    const summary = oneLine(refusal.summary, this.config.summaryChars)
    return summary.startsWith(refusal.tool) ? summary : `${refusal.tool}: ${summary}`
  }

  private approvalHint(refusal: Refusal): string {
    if (refusal.by === 'no-answerer')
      return 'nobody answers approvals in a headless run: rerun with --approve to allow such calls'
    return `decided by ${refusal.by}${refusal.note ? ` (${refusal.note})` : ''}`
  }

  private describeCall(name: string, args: unknown): string {
    let summary: string | undefined
    try {
      const tool = this.agent && this.ctx.tools.resolve(name, this.agent.id)?.tool
      summary = tool?.summarize?.(args)
    } catch {
      // A summary is a courtesy: a tool whose summarize() throws on odd arguments still runs and is shown raw.
    }
    if (summary === undefined) return `${name} ${summarizeArguments(args, this.config.summaryChars)}`.trimEnd()
    const short = oneLine(summary, this.config.summaryChars)
    return short.startsWith(name) ? short : `${name}: ${short}`
  }
}

function sameRoute(a: Route, b: Route): boolean {
  return JSON.stringify(a) === JSON.stringify(b)
}

/** The directory a new session runs in: `--cwd` (relative to where dsh started) or the start directory. */
export function workingDirectory(start: string, given: string | undefined): string {
  if (given === undefined) return start
  const dir = resolve(start, given)
  let isDir = false
  try {
    isDir = statSync(dir).isDirectory()
  } catch {
    // reported below
  }
  if (!isDir) throw new UsageError(`--cwd ${given}: not a directory`)
  return realpathSync(dir)
}
