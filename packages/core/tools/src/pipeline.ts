import type { ImageBlock, TextBlock } from '@dsh/llm'
import type { Context } from '@dsh/cordis'
import type { Tools } from './tools.ts'
import {
  ToolError,
  type Decision,
  type ToolCallRequest,
  type ToolContext,
  type ToolInvocation,
  type ToolErrorCode,
  type ToolErrorData,
  type ToolOutput,
  type ToolResultData,
} from './types.ts'
import type { ValidateFunction } from 'ajv'
import { describeErrors, oversizedArguments } from './validate.ts'
import { redactResult, redactText } from './redaction.ts'
import { LiveOutputRecorder } from './live-output.ts'

export interface BatchOptions {
  signal: AbortSignal
  maxParallel: number
  /**
   * The calls are a program's (run_code, docs/architecture.md "Code mode"): logged with this call as their
   * `parentCallId`, resolved with reach `program`, otherwise through the same checks as the model's calls.
   */
  parentCallId?: string
}

const errorResult = (callId: string, code: ToolErrorCode, message: string): ToolResultData => ({
  callId,
  content: [{ type: 'text', text: message }],
  error: { code, message },
})

function normalize(callId: string, output: ToolOutput): ToolResultData {
  if (typeof output === 'string') return { callId, content: [{ type: 'text', text: output }] }
  const result: ToolResultData = { callId, content: output.content }
  if (output.error) result.error = output.error
  return result
}

/** Keeps a head and a tail of over-long text, with a note saying how much was cut (never silent). */
function capText(blocks: (TextBlock | ImageBlock)[], max: number): (TextBlock | ImageBlock)[] {
  return blocks.map((block) => {
    if (block.type !== 'text' || block.text.length <= max) return block
    const head = block.text.slice(0, Math.floor(max * 0.6))
    const tail = block.text.slice(block.text.length - Math.floor(max * 0.4))
    return {
      type: 'text',
      text: `${head}\n\n[… ${block.text.length - head.length - tail.length} characters cut …]\n\n${tail}`,
    }
  })
}

/**
 * One batch of calls (docs/architecture.md, "Agents and the turn"): decisions (validation, pre-execute, approval) in model order just before
 * each dispatch; a safe call may start while earlier safe calls run; an unsafe call waits for everything
 * before it and blocks everything after it; results are appended in model order. On cancel, running calls
 * drain and keep their results and undispatched calls get `ABORTED_BEFORE_DISPATCH`.
 */
export async function runBatch(
  tools: Tools,
  ctx: Context,
  calls: ToolCallRequest[],
  base: Omit<ToolContext, 'callId' | 'signal'>,
  options: BatchOptions,
): Promise<ToolResultData[]> {
  const { session } = base
  const results: (ToolResultData | undefined)[] = calls.map(() => undefined)
  let appended = 0
  const appendReady = () => {
    while (appended < calls.length && results[appended]) {
      const result = results[appended++]!
      session.append('tool/result', {
        callId: result.callId,
        content: result.content,
        ...(result.error ? { error: result.error } : {}),
      })
    }
  }
  const parent = options.parentCallId !== undefined ? { parentCallId: options.parentCallId } : {}
  for (const call of calls)
    session.append('tool/call', { callId: call.callId, name: call.name, arguments: call.arguments as any, ...parent })

  const running = new Set<Promise<void>>()
  const drainAll = async () => {
    while (running.size) await Promise.race(running)
  }
  for (let index = 0; index < calls.length; index++) {
    const call = calls[index]!
    const settle = (result: ToolResultData) => {
      results[index] = redactResult(ctx, result) // every path, before the log
      appendReady()
    }
    const reach = options.parentCallId !== undefined ? 'program' : 'direct'
    const found = tools.resolve(call.name, base.agentId, reach)
    if (!found) {
      const known = tools.visible(base.agentId, reach).map((tool) => tool.name)
      settle(
        errorResult(
          call.callId,
          'UNKNOWN_TOOL',
          `There is no tool named "${call.name}". Available tools: ${known.join(', ') || 'none'}.`,
        ),
      )
      continue
    }
    if (options.signal.aborted) {
      settle(errorResult(call.callId, 'ABORTED_BEFORE_DISPATCH', 'The turn was cancelled before this call ran.'))
      continue
    }
    if (typeof call.arguments !== 'object' || call.arguments === null || Array.isArray(call.arguments)) {
      settle(
        errorResult(
          call.callId,
          'INVALID_ARGS',
          `Arguments of ${call.name} must be a JSON object; received ${typeof call.arguments === 'string' ? `unparseable text: ${String(call.arguments).slice(0, 200)}` : JSON.stringify(call.arguments)}.`,
        ),
      )
      continue
    }
    const oversized = oversizedArguments(
      call.name,
      call.arguments as Record<string, unknown>,
      tools.config.maxArgumentBytes,
    )
    if (oversized) {
      settle(errorResult(call.callId, 'INVALID_ARGS', oversized))
      continue
    }
    const args = structuredClone(call.arguments)
    if (!found.validate(args)) {
      settle(
        errorResult(
          call.callId,
          'INVALID_ARGS',
          `Invalid arguments for ${call.name}: ${describeErrors(found.validate)}.`,
        ),
      )
      continue
    }
    // An unsafe call waits for everything before it.
    const safe = !!found.tool.concurrencySafe
    if (!safe) await drainAll()
    else while (running.size >= Math.max(1, options.maxParallel)) await Promise.race(running)
    if (options.signal.aborted) {
      settle(errorResult(call.callId, 'ABORTED_BEFORE_DISPATCH', 'The turn was cancelled before this call ran.'))
      continue
    }

    const controller = new AbortController()
    const onAbort = () => controller.abort(options.signal.reason)
    options.signal.addEventListener('abort', onAbort, { once: true })
    const context: ToolContext = { ...base, callId: call.callId, signal: controller.signal }
    const invocation: ToolInvocation = {
      callId: call.callId,
      name: call.name,
      arguments: args,
      tool: found.tool,
      context,
    }

    const decision = await decide(ctx, invocation, options.signal)
    const refusal =
      decision.refusal ??
      (decision.edited ? await applyEdit(ctx, invocation, decision.edited, found.validate, options.signal) : undefined)
    // A cancel that came while the policy or the approver was deciding stops the call before its effect.
    const stopped =
      refusal ??
      (options.signal.aborted
        ? errorResult(call.callId, 'ABORTED_BEFORE_DISPATCH', 'The turn was cancelled before this call ran.')
        : undefined)
    if (stopped) {
      options.signal.removeEventListener('abort', onAbort)
      settle(stopped)
      continue
    }
    session.append('tool/dispatched', { callId: call.callId })
    await session.flush() // durable before the effect
    const live =
      tools.config.liveOutputMaxChars > 0
        ? new LiveOutputRecorder(ctx, session, call.callId, liveLimits(tools))
        : undefined
    if (live) context.liveOutput = live.take
    const task = execute(tools, ctx, invocation, controller).then((result) => {
      options.signal.removeEventListener('abort', onAbort)
      live?.finish() // every piece before its result
      settle(decision.edited ? withEditNote(result, invocation.arguments) : result)
    })
    const tracked = task.finally(() => running.delete(tracked))
    running.add(tracked)
    if (!safe) await drainAll()
  }
  await drainAll()
  appendReady()
  return results as ToolResultData[]
}

const liveLimits = (tools: Tools) => ({
  chunkChars: tools.config.liveOutputChunkChars,
  intervalMs: tools.config.liveOutputIntervalMs,
  maxChars: tools.config.liveOutputMaxChars,
})

/**
 * The phases of the check before a call, outermost first (docs/architecture.md, "Tools"; decision
 * `2026-12-02-pre-execute-phases.md`): the ceiling, then user hooks, then policy, then the tool's own
 * `needsApproval`; approval comes after all of them. Each phase is a waterfall of its own, so the order is the
 * pipeline's and not that of the rows whose listeners join a phase.
 */
export const PRE_EXECUTE_PHASES = ['tools/pre-execute/ceiling', 'tools/pre-execute/hooks', 'tools/pre-execute'] as const

/** Pre-execute policy: allow, ask, deny — or an error result when the policy check itself failed. */
async function preExecute(ctx: Context, invocation: ToolInvocation): Promise<Decision | ToolResultData> {
  const { context, tool } = invocation
  const toolDefault = async (): Promise<Decision> => {
    const reason = await tool!.needsApproval?.(invocation.arguments, context)
    return reason ? { action: 'ask', reason } : { action: 'allow' }
  }
  const phase = (index: number): Promise<Decision> =>
    index === PRE_EXECUTE_PHASES.length
      ? toolDefault()
      : ctx.waterfall(PRE_EXECUTE_PHASES[index]!, invocation, () => phase(index + 1))
  try {
    return await phase(0)
  } catch (error) {
    return errorResult(
      invocation.callId,
      'DENIED',
      `The call was not allowed: the policy check failed (${error instanceof Error ? error.message : error}).`,
    )
  }
}

/** What the policy and approval came to: a refusal, or a go — with the approver's arguments when they edited the call. */
type Verdict = { refusal?: ToolResultData; edited?: Record<string, unknown> }

/** Pre-execute policy, then approval when asked. */
async function decide(ctx: Context, invocation: ToolInvocation, signal: AbortSignal): Promise<Verdict> {
  const { context, tool } = invocation
  const decision = await preExecute(ctx, invocation)
  if (!('action' in decision)) return { refusal: decision }
  if (decision.action === 'allow') return {}
  if (decision.action === 'deny')
    return { refusal: errorResult(invocation.callId, 'DENIED', `The call was denied: ${decision.reason}`) }
  const approval = ctx.get('approval')
  const summary = redactText(
    ctx,
    tool!.summarize?.(invocation.arguments) ??
      `${invocation.name} ${JSON.stringify(invocation.arguments).slice(0, 200)}`,
  )
  // A rule naming a credential value (the exact line of `curl -H 'auth: …'`) is offered to nobody: a standing
  // grant would write the secret into grants.yaml, and a redacted rule would match nothing (docs/security.md).
  const rule = decision.rule && redactText(ctx, decision.rule) === decision.rule ? decision.rule : undefined
  const verdict = approval
    ? await approval.request(
        context.session,
        {
          agentId: context.agentId,
          callId: invocation.callId,
          tool: invocation.name,
          summary,
          reason: redactText(ctx, decision.reason),
          ...(rule ? { rule } : {}),
          arguments: invocation.arguments as Record<string, unknown>,
        },
        signal,
      )
    : {
        answer: 'reject' as const,
        by: 'no-answerer' as const,
        note: 'no approval service is mounted',
        message: undefined,
        arguments: undefined,
      }
  if (verdict.answer !== 'reject') return verdict.arguments ? { edited: verdict.arguments } : {}
  const why =
    verdict.by === 'user'
      ? 'the user rejected it'
      : verdict.by === 'policy'
        ? 'the approval policy rejects every request'
        : verdict.by === 'grant'
          ? `a deny rule refuses it (${verdict.note ?? ''})`
          : verdict.by === 'timeout'
            ? 'nobody answered in time'
            : verdict.by === 'cancelled'
              ? 'the turn was cancelled'
              : 'nobody can answer approvals here'
  const said = verdict.message ? ` Their message: ${redactText(ctx, verdict.message)}` : ''
  return {
    refusal: errorResult(
      invocation.callId,
      'APPROVAL_REJECTED',
      `This call needed approval (${decision.reason}) and was not approved: ${why}.${said}`,
    ),
  }
}

/**
 * The approver allowed the call with other arguments: they are validated like the model's, logged
 * (`tool/edited`), and the policy is asked again so that no edit runs what a deny rule or ceiling refuses
 * (an `ask` is already answered: the approver allowed this very call). Returns a refusal, or undefined to run.
 */
async function applyEdit(
  ctx: Context,
  invocation: ToolInvocation,
  edited: Record<string, unknown>,
  validate: ValidateFunction,
  signal: AbortSignal,
): Promise<ToolResultData | undefined> {
  const args = structuredClone(edited)
  if (!validate(args))
    return errorResult(
      invocation.callId,
      'INVALID_ARGS',
      `The approver's edited arguments for ${invocation.name} are invalid: ${describeErrors(validate)}.`,
    )
  invocation.context.session.append('tool/edited', { callId: invocation.callId, arguments: args as any })
  invocation.arguments = args
  if (signal.aborted)
    return errorResult(invocation.callId, 'ABORTED_BEFORE_DISPATCH', 'The turn was cancelled before this call ran.')
  const again = await preExecute(ctx, invocation)
  if (!('action' in again)) return again
  return again.action === 'deny'
    ? errorResult(invocation.callId, 'DENIED', `The edited call was denied: ${again.reason}`)
    : undefined
}

/** The model reads that its call ran with the approver's arguments, and which (the log's tool/result says so). */
function withEditNote(result: ToolResultData, args: unknown): ToolResultData {
  const note = {
    type: 'text' as const,
    text: `The approver edited this call's arguments before it ran; it ran with: ${JSON.stringify(args)}`,
  }
  return { ...result, content: [note, ...result.content] }
}

async function execute(
  tools: Tools,
  ctx: Context,
  invocation: ToolInvocation,
  controller: AbortController,
): Promise<ToolResultData> {
  const { tool, callId } = invocation
  const timeoutMs = tool!.timeoutMs ?? tools.config.timeoutMs
  let timedOut = false
  const timer =
    timeoutMs > 0 ? setTimeout(() => ((timedOut = true), controller.abort(new Error('timeout'))), timeoutMs) : undefined
  try {
    const body = async (): Promise<ToolResultData> => {
      const pending = tool!
        .execute(invocation.arguments, invocation.context)
        .then((output) => normalize(callId, output))
      // A body that ignores its signal must not hold the turn past the deadline or the cancel.
      // (An already-aborted signal fires no 'abort' event, so that case starts the grace at once.)
      const aborted = new Promise<ToolResultData>((resolve) => {
        const grace = () =>
          setTimeout(
            () => resolve(errorResult(callId, 'ABORTED', 'The call was stopped.')),
            tools.config.abortGraceMs,
          ).unref()
        if (controller.signal.aborted) grace()
        else controller.signal.addEventListener('abort', grace, { once: true })
      })
      return Promise.race([pending, aborted])
    }
    // Redacted before the transforms too, so that none of them (spill writes a file) sees a secret value.
    let result = redactResult(ctx, await ctx.waterfall('tools/execute', invocation, body))
    result = await ctx.waterfall('tools/post-execute', invocation, async () => result)
    if (timedOut)
      return errorResult(
        callId,
        'TOOL_TIMEOUT',
        `${invocation.name} did not finish within ${timeoutMs} ms and was stopped.${partialText(result)}`,
      )
    return { ...result, content: capText(result.content, tools.config.maxOutputChars) }
  } catch (error) {
    if (timedOut)
      return errorResult(
        callId,
        'TOOL_TIMEOUT',
        `${invocation.name} did not finish within ${timeoutMs} ms and was stopped.`,
      )
    const data: ToolErrorData =
      error instanceof ToolError
        ? { code: error.code, message: error.message }
        : {
            code: controller.signal.aborted ? 'ABORTED' : 'TOOL_FAILED',
            message: error instanceof Error ? error.message : String(error),
          }
    return errorResult(callId, data.code, data.message)
  } finally {
    if (timer) clearTimeout(timer)
  }
}

function partialText(result: ToolResultData): string {
  const text = result.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n')
  return text ? `\nOutput before it was stopped:\n${text}` : ''
}
