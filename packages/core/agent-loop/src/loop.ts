import { randomUUID } from 'node:crypto'
import type { Context } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import {
  AgentLoop,
  type Agent,
  type EnteredMessage,
  type PreStepDecision,
  type QueuedInput,
  type RequestDraft,
  type RetryDecision,
  type TurnCompletionDecision,
  type TurnResult,
} from '@dsh/agent'
import { LlmError, type LlmRequest, type ToolCallBlock } from '@dsh/llm'
import { DSH_STOPPED, logRequestHeader, openStepOf, type ErrorData, type TurnEndReason } from '@dsh/session'
import type {} from '@dsh/settings'
import type {} from '@dsh/system-prompt'
import type {} from '@dsh/tools'
import { sleep, streamIntoLog } from './stream.ts'

export interface Config {
  maxSteps: number
  maxParallelToolCalls: number
}

type TurnEnd = { reason: TurnEndReason; error?: ErrorData }

declare module '@dsh/settings' {
  interface Settings {
    'agent.maxSteps': number
    'agent.maxParallelToolCalls': number
  }
}

/**
 * The shipped turn driver (docs/architecture.md, "The turn"). Each step: claim input, pre-step,
 * log the input, assemble the request from the log, let listeners adjust it, log what changed, flush,
 * stream the answer into the log (`ctx.llm` checks the request against the log at its boundary), run its
 * tool calls through ctx.tools. Every turn ends with `turn/end`, whatever a listener throws.
 */
export default class DefaultAgentLoop extends AgentLoop {
  static inject = ['sessions', 'llm', 'tools', 'systemPrompt', 'settings']
  static Config: Schema<Config> = Schema.object({
    maxSteps: Schema.natural()
      .min(1)
      .default(100)
      .description(
        'Default of the `agent.maxSteps` setting: steps (model requests) one turn may take before it ends with `max-steps`.',
      ),
    maxParallelToolCalls: Schema.natural()
      .min(1)
      .default(4)
      .description(
        'Default of the `agent.maxParallelToolCalls` setting: concurrency-safe tool calls running at the same time, at most.',
      ),
  })

  constructor(ctx: Context, config: Config) {
    super(ctx)
    // Limits are user settings ($DSH_HOME/settings.yaml); the row's config gives their defaults.
    ctx.settings.define('agent.maxSteps', Schema.natural().min(1).default(config.maxSteps), {
      description: 'Steps (model requests) one turn may take.',
    })
    ctx.settings.define('agent.maxParallelToolCalls', Schema.natural().min(1).default(config.maxParallelToolCalls), {
      description: 'Concurrency-safe tool calls that may run at the same time.',
    })
  }

  async runTurn(agent: Agent, first: QueuedInput, signal: AbortSignal): Promise<TurnResult> {
    const session = agent.session
    const turnId = randomUUID()
    session.append('turn/start', { turnId })
    if (!session.last('model/route')) session.append('model/route', { route: agent.route })
    let text = ''
    let end: TurnEnd
    try {
      end = await this.steps(agent, turnId, first, signal, (latest) => (text = latest))
    } catch (error) {
      end = {
        reason: signal.aborted ? 'aborted' : 'error',
        error: {
          code:
            error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : 'LOOP_FAILED',
          message: error instanceof Error ? error.message : String(error),
        },
      }
    }
    // A turn cut because dsh is stopping was not cancelled by anyone: it is interrupted, and may be continued.
    if (end.reason === 'aborted' && (signal.reason as { code?: unknown } | undefined)?.code === DSH_STOPPED)
      end = { ...end, reason: 'interrupted' }
    let result: TurnResult = { turnId, reason: end.reason, text, ...(end.error ? { error: end.error } : {}) }
    try {
      await this.ctx.serial('agent/turn-stopping', agent, result)
    } catch (error) {
      // Every turn ends in the log: a listener that throws makes the turn an error, recorded in its turn/end.
      const failure = {
        code:
          error instanceof Error && 'code' in error && typeof error.code === 'string'
            ? error.code
            : 'TURN_STOPPING_FAILED',
        message: `an agent/turn-stopping listener failed: ${error instanceof Error ? error.message : String(error)}`,
      }
      result = { ...result, reason: 'error', error: result.error ?? failure }
    }
    const step = openStepOf(session.events, turnId) // a step cut by a failure still closes inside its turn
    if (step !== undefined)
      session.append('step/end', { turnId, step, finish: result.reason === 'aborted' ? 'aborted' : 'error' })
    session.append('turn/end', { turnId, reason: result.reason, ...(result.error ? { error: result.error } : {}) })
    await session.flush()
    return result
  }

  private async steps(
    agent: Agent,
    turnId: string,
    first: QueuedInput,
    signal: AbortSignal,
    setText: (text: string) => void,
  ): Promise<TurnEnd> {
    const session = agent.session
    let pending: QueuedInput[] = [first]
    let carried: EnteredMessage[] = [] // what an agent/turn-complete listener continued the turn with
    let continued = 0
    for (let step = 0; ; step++) {
      if (signal.aborted) return { reason: 'aborted' }
      // An agent's own limit (`dsh --max-steps`, an SDK prompt's `maxSteps`) replaces the setting, up or down.
      const maxSteps = agent.maxSteps ?? this.ctx.settings.get('agent.maxSteps')
      if (step >= maxSteps) {
        return {
          reason: 'max-steps',
          error: { code: 'MAX_STEPS', message: `the turn reached its limit of ${maxSteps} steps` },
        }
      }
      const input = [...pending, ...agent.claimStepInput()]
      pending = []
      const decision = await this.ctx.waterfall(
        'agent/pre-step',
        { agent, turnId, step, input },
        async (): Promise<PreStepDecision> => ({
          action: 'enter',
          messages: input.map((item) => ({
            content: item.content,
            source: item.mode === 'followup' ? 'user' : item.mode,
            messageId: item.messageId,
          })),
        }),
      )
      if (decision.action === 'reject')
        return { reason: 'blocked', error: { code: 'PRE_STEP_REJECTED', message: decision.reason } }
      session.append('step/start', { turnId, step })
      for (const message of [...carried, ...decision.messages]) session.append('user/message', message)
      carried = []
      for (const mode of ['steer', 'inject'] as const) {
        const count = input.filter((item) => item.mode === mode).length
        if (count) session.append('inbox/spliced', { mode, count })
      }

      const answer = await this.requestWithRetries(agent, turnId, step, signal)
      const texts = answer.content.flatMap((block) => (block.type === 'text' ? [block.text] : []))
      if (texts.length) setText(texts.join(''))
      const calls = answer.content.filter((block): block is ToolCallBlock => block.type === 'tool-call')
      if (answer.finish === 'error') {
        session.append('step/end', { turnId, step, finish: 'error' })
        return {
          reason: 'error',
          error: {
            code: answer.error?.code ?? 'MODEL_ERROR',
            message: answer.error?.message ?? 'the model request failed',
          },
        }
      }
      if (calls.length && answer.finish !== 'aborted') {
        await this.ctx.tools.runCalls(
          calls.map((call) => ({ callId: call.callId, name: call.name, arguments: call.arguments })),
          { agentId: agent.id, session, cwd: agent.cwd, scope: agent.scope },
          { signal, maxParallel: this.ctx.settings.get('agent.maxParallelToolCalls') },
        )
      }
      session.append('step/end', { turnId, step, finish: answer.finish })
      if (signal.aborted || answer.finish === 'aborted') return { reason: 'aborted' }
      if (calls.length || agent.steeringWaits) continue
      if (answer.finish === 'max-tokens')
        return { reason: 'max-tokens', error: { code: 'MAX_TOKENS', message: 'the model stopped at its output limit' } }
      const completion = await this.ctx.waterfall(
        'agent/turn-complete',
        { agent, turnId, step, continued },
        async (): Promise<TurnCompletionDecision> => ({ action: 'complete' }),
      )
      if (completion.action === 'continue' && completion.messages.length) {
        carried = completion.messages
        continued++
        continue
      }
      return { reason: 'completed' }
    }
  }

  /** One model request, repeated while `agent/request-error` listeners ask for a retry. */
  private async requestWithRetries(agent: Agent, turnId: string, step: number, signal: AbortSignal) {
    for (let attempt = 0; ; attempt++) {
      const request = await this.prepare(agent, turnId, step, signal)
      await this.ctx.serial('agent/before-model-call', agent, request)
      const answer = await streamIntoLog(this.ctx.llm, agent.session, request)
      if (answer.finish !== 'error' || !answer.error || signal.aborted) return answer
      const retry = await this.ctx.waterfall(
        'agent/request-error',
        { agent, error: LlmError.from(answer.error), attempt, request },
        async (): Promise<RetryDecision> => ({ retry: false }),
      )
      if (!retry.retry || !(await sleep(retry.delayMs, signal))) return answer
    }
  }

  /** Builds the request from the log, lets listeners adjust it, logs what changed and flushes. */
  private async prepare(agent: Agent, turnId: string, step: number, signal: AbortSignal): Promise<LlmRequest> {
    const session = agent.session
    const route = agent.route
    const info = this.ctx.llm.describe(route)
    const tools = this.ctx.tools.schemas(agent.id)
    const system = await this.ctx.systemPrompt.assemble({
      cwd: agent.cwd,
      route,
      tools: tools.map((tool) => tool.name),
      agentId: agent.id,
      override: agent.systemPrompt,
    })
    const draft: RequestDraft = { agent, turnId, step, request: { route, system, messages: [], tools, signal } }
    if (info.maxOutputTokens) draft.request.maxOutputTokens = info.maxOutputTokens
    await this.ctx.waterfall('agent/request', draft, async () => {})
    const request = draft.request
    const window = request.route === route ? info.contextWindow : this.ctx.llm.describe(request.route).contextWindow
    logRequestHeader(session, request, window)
    // History last: listeners above may have appended (e.g. a route switch) and the request must match the log.
    request.messages = [...session.messages()]
    request.origin = { sessionId: session.id, purpose: 'turn' }
    await session.flush() // durable before the paid call
    return request
  }
}
