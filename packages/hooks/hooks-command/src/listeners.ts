import type { EnteredMessage, TurnCompletionDecision } from '@dsh/agent'
import type {} from '@dsh/compaction'
import type {} from '@dsh/subagent'
import type { Context } from '@dsh/cordis'
import type { HookEventName, HookOutcome } from '@dsh/hooks'
import type { Session } from '@dsh/session'
import type { Decision, ToolInvocation, ToolResultData } from '@dsh/tools'
import type HooksCommand from './index.ts'
import { fromClaudeCode, matchNames, toClaudeCode } from './tool-names.ts'

// Where each event fires (docs/extending.md#hooks). What a hook adds for the model enters the log first:
// in the tool's result (PreToolUse's reason, PostToolUse's feedback and context) or as a
// `user/message { source: 'hook' }` (SessionStart, UserPromptSubmit, Stop), so every request derives from it.

const text = (value: string): EnteredMessage => ({ content: [{ type: 'text', text: value }], source: 'hook' })
const contextMessages = (event: HookEventName, outcome: HookOutcome) =>
  outcome.context.map((context) => text(`Context from a ${event} hook:\n${context}`))
const textOf = (blocks: readonly { type: string; text?: string }[]) =>
  blocks.flatMap((block) => (block.type === 'text' && block.text ? [block.text] : [])).join('\n')

/** A hook's `continue: false` on a tool event: the turn stops (cancelled) once this call is settled. */
function stopTurn(ctx: Context, agentId: string, reason: string): void {
  ctx.get('agents')?.get(agentId)?.cancel(`a hook asked to stop: ${reason}`)
}

export function listen(ctx: Context, hooks: HooksCommand): void {
  // The hooks phase (docs/architecture.md, "Tools"): after the ceiling, before policy, so the rewritten input
  // is what every policy (grants, read-before-edit, the tool's own approval) then decides on, and no hook
  // answer can skip what they or the ceiling decide — whatever the order of the rows.
  ctx.on('tools/pre-execute/hooks', (invocation, next) => preToolUse(ctx, hooks, invocation, next))
  ctx.on('tools/post-execute', (invocation, next) => postToolUse(ctx, hooks, invocation, next))
  const started = new WeakSet<Session>()
  ctx.on('agent/pre-step', async (step, next) => {
    const decision = await next()
    if (decision.action !== 'enter') return decision
    const { agent } = step
    const base = { session: agent.session, agentId: agent.id, cwd: agent.cwd, signal: new AbortController().signal }
    const before: EnteredMessage[] = []
    const after: EnteredMessage[] = []
    if (step.step === 0 && !started.has(agent.session)) {
      started.add(agent.session)
      const outcome = await hooks.fire('SessionStart', {
        ...base,
        fields: { source: agent.session.last('turn/end') ? 'resume' : 'startup' },
      })
      before.push(...contextMessages('SessionStart', outcome))
    }
    for (const item of step.input.filter((input) => input.mode !== 'inject')) {
      const outcome = await hooks.fire('UserPromptSubmit', { ...base, fields: { prompt: textOf(item.content) } })
      if (outcome.blocked)
        return { action: 'reject', reason: `a UserPromptSubmit hook blocked the prompt: ${outcome.blocked}` }
      if (outcome.stop !== undefined)
        return { action: 'reject', reason: `a UserPromptSubmit hook stopped the turn: ${outcome.stop}` }
      after.push(...contextMessages('UserPromptSubmit', outcome))
    }
    return before.length || after.length
      ? { ...decision, messages: [...before, ...decision.messages, ...after] }
      : decision
  })
  ctx.on('agent/turn-complete', async (completion, next): Promise<TurnCompletionDecision> => {
    const decision = await next()
    if (decision.action !== 'complete') return decision
    const { agent } = completion
    const signal = new AbortController().signal
    const outcome = await hooks.fire('Stop', {
      session: agent.session,
      agentId: agent.id,
      cwd: agent.cwd,
      signal,
      fields: { stop_hook_active: completion.continued > 0 },
    })
    if (!outcome.blocked || outcome.stop !== undefined) return decision
    if (completion.continued >= hooks.config.stopContinuations) {
      ctx
        .logger('hooks')
        .info(
          'session %s: a Stop hook blocked again after %d continuations; the turn completes',
          agent.session.id,
          completion.continued,
        )
      return decision
    }
    return { action: 'continue', messages: [text(`A Stop hook did not let the turn end yet:\n${outcome.blocked}`)] }
  })
  ctx.on('compaction/prepare', async (input, next) => {
    const { agent } = input
    const start = agent.session.last('compaction/start')?.data
    const fields = { trigger: start?.trigger === 'manual' ? 'manual' : 'auto', custom_instructions: start?.focus ?? '' }
    await hooks.fire('PreCompact', {
      session: agent.session,
      agentId: agent.id,
      cwd: agent.cwd,
      signal: new AbortController().signal,
      fields,
    })
    return next()
  })
  // A child's turn ended (@dsh/subagent's serial hook): SubagentStop runs in the parent's session and is
  // logged there. Claude Code's `decision: block` would keep the child going; here the child's result is
  // already the parent's tool result, so a block is only logged (docs/extending.md#hooks).
  ctx.on('subagent/stopped', async (parent, result) => {
    const fields = {
      stop_hook_active: false,
      subagent_session_id: result.childSessionId,
      subagent_status: result.status,
    }
    await hooks.fire('SubagentStop', {
      session: parent.session,
      agentId: parent.id,
      cwd: parent.cwd,
      signal: new AbortController().signal,
      fields,
    })
  })
}

/** What a tool event's hook is told: the call in Claude Code's names, matched by tool name. */
function toolTrigger(invocation: ToolInvocation, extra: Record<string, unknown> = {}) {
  const { context, name, callId } = invocation
  const fields = { ...toClaudeCode(name, invocation.arguments, context.cwd), ...extra, tool_use_id: callId }
  return {
    session: context.session,
    agentId: context.agentId,
    cwd: context.cwd,
    signal: context.signal,
    matchOn: matchNames(name),
    callId,
    fields,
  }
}

function refusalOf(outcome: HookOutcome): string | undefined {
  if (outcome.failures.length)
    return `a PreToolUse hook could not decide, so the call is refused: ${outcome.failures.join('; ')}`
  if (outcome.blocked) return `a PreToolUse hook blocked it: ${outcome.blocked}`
  if (outcome.permission === 'deny')
    return `a PreToolUse hook denied it${outcome.permissionReason ? `: ${outcome.permissionReason}` : ''}`
  if (outcome.stop !== undefined) return `a PreToolUse hook stopped the turn: ${outcome.stop}`
  return undefined
}

/**
 * PreToolUse: deny (exit 2, `deny`, a hook that failed) refuses before anything else is asked; `updatedInput`
 * replaces the arguments (validated, logged as `hook/updated-input`) before the other policies decide; `ask`
 * makes the call ask. `allow` answers nothing dsh asks: every dsh question widens the session's authority
 * (running unconfined, `.git` writable, a write outside the workspace), which only a person or a user grant may.
 */
async function preToolUse(
  ctx: Context,
  hooks: HooksCommand,
  invocation: ToolInvocation,
  next: () => Promise<Decision>,
): Promise<Decision> {
  const { context, name } = invocation
  const outcome = await hooks.fire('PreToolUse', toolTrigger(invocation))
  if (outcome.stop !== undefined) stopTurn(ctx, context.agentId, outcome.stop)
  const refusal = refusalOf(outcome)
  if (refusal) return { action: 'deny', reason: refusal }
  if (outcome.updatedInput) {
    const args = fromClaudeCode(name, outcome.updatedInput)
    const validate = ctx.tools.resolve(name, context.agentId)?.validate
    if (!validate || !validate(args)) {
      const why = (validate?.errors ?? [])
        .map((error: any) => `${error.instancePath || 'arguments'} ${error.message}`)
        .join('; ')
      return {
        action: 'deny',
        reason: `a PreToolUse hook rewrote the input into arguments ${name} does not accept (${why})`,
      }
    }
    const file =
      context.session
        .all('hook/run')
        .findLast((event) => event.data.callId === invocation.callId && event.data.updatedInput)?.data.file ?? 'a hook'
    context.session.append('hook/updated-input', { callId: invocation.callId, arguments: args, file })
    invocation.arguments = args
  }
  const decision = await next()
  if (decision.action !== 'allow' || outcome.permission !== 'ask') return decision
  return {
    action: 'ask',
    reason: `a PreToolUse hook asks first${outcome.permissionReason ? `: ${outcome.permissionReason}` : ''}`,
  }
}

/** PostToolUse: a block's reason and every `additionalContext` are added to the result the model reads (and the log keeps). */
async function postToolUse(
  ctx: Context,
  hooks: HooksCommand,
  invocation: ToolInvocation,
  next: () => Promise<ToolResultData>,
): Promise<ToolResultData> {
  const result = await next()
  const { context } = invocation
  const response = { output: textOf(result.content), ...(result.error ? { error: result.error } : {}) }
  const outcome = await hooks.fire('PostToolUse', toolTrigger(invocation, { tool_response: response }))
  if (outcome.stop !== undefined) stopTurn(ctx, context.agentId, outcome.stop)
  const notes = [
    ...(outcome.blocked ? [`Feedback from a PostToolUse hook:\n${outcome.blocked}`] : []),
    ...outcome.context.map((extra) => `Context from a PostToolUse hook:\n${extra}`),
  ]
  if (!notes.length) return result
  return { ...result, content: [...result.content, ...notes.map((note) => ({ type: 'text' as const, text: note }))] }
}
