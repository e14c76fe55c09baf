import { randomUUID } from 'node:crypto'
import { AgentLoop, type Agent, type QueuedInput, type TurnResult } from '@dsh/agent'
import { BlockAssembler, type LlmRequest, type ToolCallBlock } from '@dsh/llm'
import { logRequestHeader, openStepOf, type ErrorData } from '@dsh/session'
import type {} from '@dsh/system-prompt'
import type {} from '@dsh/tools'

/**
 * A deliberately minimal second `AgentLoop`, for the conformance kit: it proves the loop is replaceable
 * (mounted by a row in place of `@dsh/agent-loop`) and that the request check at the `llm/stream` boundary
 * holds for a loop that never emits `agent/before-model-call`. No pre-step, no `agent/request`, no retries,
 * no step limit, no chunks; tool calls one at a time.
 */
export default class MinimalLoop extends AgentLoop {
  static inject = ['sessions', 'llm', 'tools', 'systemPrompt']

  async runTurn(agent: Agent, first: QueuedInput, signal: AbortSignal): Promise<TurnResult> {
    const session = agent.session
    const turnId = randomUUID()
    session.append('turn/start', { turnId })
    let end: { reason: TurnResult['reason']; error?: ErrorData } = { reason: 'completed' }
    let text = ''
    try {
      let input = [first]
      for (let step = 0; ; step++) {
        input.push(...agent.claimStepInput())
        session.append('step/start', { turnId, step })
        for (const item of input)
          session.append('user/message', {
            content: item.content,
            source: item.mode === 'followup' ? 'user' : item.mode,
            messageId: item.messageId,
          })
        input = []
        const route = agent.route
        const tools = this.ctx.tools.schemas(agent.id)
        const system = await this.ctx.systemPrompt.assemble({
          cwd: agent.cwd,
          route,
          tools: tools.map((tool) => tool.name),
          agentId: agent.id,
          override: agent.systemPrompt,
        })
        logRequestHeader(session, { route, system, tools }, this.ctx.llm.describe(route).contextWindow)
        await session.flush()
        const request: LlmRequest = {
          route,
          system,
          tools,
          messages: [...session.messages()],
          signal,
          origin: { sessionId: session.id, purpose: 'turn' },
        }
        const assembler = new BlockAssembler(route.provider)
        try {
          for await (const chunk of this.ctx.llm.stream(request)) {
            assembler.push(chunk)
            if (assembler.isFinished) break
          }
        } finally {
          const answer = assembler.result()
          session.append('assistant/message', {
            content: answer.content,
            usage: answer.usage,
            finish: signal.aborted ? 'aborted' : answer.finish,
            ...(answer.error ? { error: answer.error } : {}),
          })
        }
        const answer = assembler.result()
        text = answer.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('') || text
        const calls = answer.content.filter((block): block is ToolCallBlock => block.type === 'tool-call')
        if (calls.length && !signal.aborted) {
          // One at a time: this loop is minimal on purpose.
          await this.ctx.tools.runCalls(
            calls.map(({ callId, name, arguments: args }) => ({ callId, name, arguments: args })),
            { agentId: agent.id, session, cwd: agent.cwd, scope: agent.scope },
            { signal, maxParallel: 1 },
          )
        }
        session.append('step/end', { turnId, step, finish: answer.finish })
        if (signal.aborted || answer.finish === 'aborted') {
          end = { reason: 'aborted' }
          break
        }
        if (answer.finish === 'error') {
          end = {
            reason: 'error',
            error: {
              code: answer.error?.code ?? 'MODEL_ERROR',
              message: answer.error?.message ?? 'the model request failed',
            },
          }
          break
        }
        if (!calls.length && !agent.steeringWaits) break
      }
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
    const result: TurnResult = { turnId, reason: end.reason, text, ...(end.error ? { error: end.error } : {}) }
    try {
      await this.ctx.serial('agent/turn-stopping', agent, result)
    } catch (error) {
      result.reason = 'error'
      result.error ??= { code: 'TURN_STOPPING_FAILED', message: error instanceof Error ? error.message : String(error) }
    }
    const step = openStepOf(session.events, turnId) // a step cut by a failure still closes inside its turn
    if (step !== undefined)
      session.append('step/end', { turnId, step, finish: result.reason === 'aborted' ? 'aborted' : 'error' })
    session.append('turn/end', { turnId, reason: result.reason, ...(result.error ? { error: result.error } : {}) })
    await session.flush()
    return result
  }
}
