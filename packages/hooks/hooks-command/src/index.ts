// Claude Code style command hooks (docs/extending.md#hooks; docs/architecture.md, "Hooks").
import { isAbsolute, join, relative } from 'node:path'
import type {} from '@dsh/app'
import type {} from '@dsh/approval'
import type { Context } from '@dsh/cordis'
import {
  HookRunSchema,
  HookUpdatedInputSchema,
  Hooks,
  type HookCommand,
  type HookEventName,
  type HookOutcome,
  type HookTrigger,
} from '@dsh/hooks'
import Schema from '@dsh/schemastery'
import type { Session } from '@dsh/session'
import { cwdKey } from '@dsh/session-persistence'
import { combine } from './answer.ts'
import { loadHooks, matches, workspaceDigest, type HookFile, type LoadedHooks } from './config.ts'
import { listen } from './listeners.ts'
import { runHook } from './run.ts'

export interface Config {
  userFile: string
  workspaceFiles: string[]
  timeoutSeconds: number
  outputCapBytes: number
  stopContinuations: number
}

/**
 * ctx.hooks with command hooks: reads `$DSH_HOME/hooks.json` and the workspace's `.claude/settings.json` and
 * `.dsh/hooks.json` at every firing (so an edit is seen at once), runs the hooks matching an event under the
 * session's sandbox, logs each run as `hook/run`, and asks once per session (or holds a workspace grant) before
 * a workspace's hooks run: the question carries the exact rule `hooks(sha256:…)`, a digest of the commands.
 */
export default class HooksCommand extends Hooks {
  static inject = ['sessions', 'app', 'sandbox', 'sandboxPolicy', 'subprocess', 'tools']
  static Config: Schema<Partial<Config>, Config> = Schema.object({
    userFile: Schema.string()
      .default('hooks.json')
      .description("The user's hooks file, relative to $DSH_HOME (or absolute). Its hooks run without a question."),
    workspaceFiles: Schema.array(Schema.string())
      .default(['.claude/settings.json', '.dsh/hooks.json'])
      .description(
        "The workspace's hooks files, relative to the session's workspace. Their hooks run only once the user approves them for the workspace.",
      ),
    timeoutSeconds: Schema.number()
      .min(0.1)
      .default(60)
      .description('Deadline of a hook that names no `timeout` (seconds); at it its process group is killed.'),
    outputCapBytes: Schema.natural()
      .min(1)
      .default(20_000)
      .description('Bytes of a hook’s stdout and of its stderr kept (head and tail).'),
    stopContinuations: Schema.natural()
      .default(1)
      .description(
        'How many times Stop hooks may continue one turn; a block past it is logged and the turn completes.',
      ),
  })

  /** Per session: the approval of a workspace's hooks by digest (pending questions too, so each is asked once). */
  private readonly approvals = new WeakMap<Session, Map<string, Promise<boolean>>>()
  /** Per session: the configuration problems already warned about. */
  private readonly warned = new WeakMap<Session, Set<string>>()

  constructor(
    ctx: Context,
    readonly config: Config,
  ) {
    super(ctx)
    // Ignorable: what a hook gave the model is in core events (tool/result, user/message); a tree without
    // this row still reads the log.
    ctx.sessions.defineKind(ctx, 'hook/run', { ignorable: true, schema: HookRunSchema })
    ctx.sessions.defineKind(ctx, 'hook/updated-input', { ignorable: true, schema: HookUpdatedInputSchema })
    // A workspace's hooks files are the model's to write only through an approval (docs/security.md).
    ctx.sandboxPolicy.protectLoaded(ctx, config.workspaceFiles, "the hooks-command row's workspaceFiles")
    listen(ctx, this)
  }

  /** The hooks files of a workspace, user file first. */
  files(cwd: string): HookFile[] {
    const user = isAbsolute(this.config.userFile) ? this.config.userFile : join(this.ctx.app.home, this.config.userFile)
    return [
      { path: user, origin: 'user' },
      ...this.config.workspaceFiles.map((file) => ({ path: join(cwd, file), origin: 'workspace' as const })),
    ]
  }

  async fire(event: HookEventName, trigger: HookTrigger): Promise<HookOutcome> {
    const loaded = await loadHooks(this.files(trigger.cwd))
    this.warn(trigger.session, loaded)
    const problems = loaded.problems.map((problem) => `the hooks configuration is invalid: ${problem}`)
    let selected = loaded.commands.filter((hook) => hook.event === event && matches(hook, trigger.matchOn))
    if (selected.some((hook) => hook.origin === 'workspace') && !(await this.workspaceApproved(trigger, loaded)))
      selected = selected.filter((hook) => hook.origin === 'user')
    if (!selected.length) return { context: [], failures: problems }
    const input = JSON.stringify({
      session_id: trigger.session.id,
      transcript_path: join(
        this.ctx.app.home,
        'sessions',
        cwdKey(trigger.session.cwd),
        trigger.session.id,
        'session.jsonl',
      ),
      cwd: trigger.cwd,
      hook_event_name: event,
      ...trigger.fields,
    })
    const limits = { defaultTimeoutSeconds: this.config.timeoutSeconds, outputCapBytes: this.config.outputCapBytes }
    // Claude Code runs an event's hooks side by side; the log keeps them in configuration order.
    const runs = await Promise.all(selected.map((hook) => runHook(this.ctx, hook, input, trigger, limits)))
    for (const run of runs) trigger.session.append('hook/run', run.data)
    const outcome = combine(
      runs.map((run) => run.answer),
      (index) => `the ${event} hook "${selected[index]!.command}" (${selected[index]!.file})`,
    )
    return { ...outcome, failures: [...problems, ...outcome.failures] }
  }

  /** A configuration problem is a warning once per session (and refuses tool calls: see the PreToolUse listener). */
  private warn(session: Session, loaded: LoadedHooks): void {
    const seen = this.warned.get(session) ?? new Set<string>()
    this.warned.set(session, seen)
    for (const text of [...loaded.problems, ...loaded.ignored.map((what) => `ignored ${what}`)]) {
      if (seen.has(text)) continue
      seen.add(text)
      this.ctx.logger('hooks').warn('session %s: %s', session.id, text)
    }
  }

  /**
   * Whether the workspace's hooks, exactly as they are now, may run in this session: a logged approval of
   * their digest earlier in the session, else the question (answered by a held `hooks(<digest>)` grant
   * without asking). Nobody to ask is a refusal.
   */
  private workspaceApproved(trigger: HookTrigger, loaded: LoadedHooks): Promise<boolean> {
    const digest = workspaceDigest(loaded.commands, trigger.cwd)
    const held = this.approvals.get(trigger.session) ?? new Map<string, Promise<boolean>>()
    this.approvals.set(trigger.session, held)
    let answer = held.get(digest)
    if (!answer) {
      answer = approvedInLog(trigger.session, `hooks(${digest})`) ?? this.ask(trigger, digest, loaded.commands)
      held.set(digest, answer)
    }
    return answer
  }

  private async ask(trigger: HookTrigger, digest: string, commands: HookCommand[]): Promise<boolean> {
    const approval = this.ctx.get('approval')
    if (!approval) return false
    const workspace = commands.filter((hook) => hook.origin === 'workspace')
    const files = [...new Set(workspace.map((hook) => relative(trigger.cwd, hook.file)))]
    const listing = workspace
      .map((hook) => `${hook.event}${hook.matcher ? ` [${hook.matcher}]` : ''}: ${hook.command}`)
      .join('\n')
    const decision = await approval.request(
      trigger.session,
      {
        agentId: trigger.agentId,
        tool: 'hooks',
        summary: `run the hooks of ${files.join(', ')} (${workspace.length} command${workspace.length === 1 ? '' : 's'})`,
        reason: `this workspace configures commands dsh would run at session events, under the sandbox:\n${listing}\nAn approval holds for these exact commands; a change asks again.`,
        rule: `hooks(${digest})`,
      },
      trigger.signal,
    )
    return decision.answer !== 'reject'
  }
}

/** The session's earlier answer to the question for `rule` (a resumed session is not asked again), if any. */
function approvedInLog(session: Session, rule: string): Promise<boolean> | undefined {
  const asked = new Set(
    session.all('approval/asked').flatMap((event) => (event.data.rule === rule ? [event.data.requestId] : [])),
  )
  if (!asked.size) return undefined
  const decided = session.all('approval/decided').findLast((event) => asked.has(event.data.requestId))
  return decided ? Promise.resolve(decided.data.answer !== 'reject') : undefined
}
