import type { AgentContext, SessionUpdate, StopReason } from '@agentclientprotocol/sdk'
import type { Agent, TurnResult } from '@dsh/agent'
import type { ImageBlock, TextBlock } from '@dsh/llm'
import type { SessionEvent } from '@dsh/session'
import { AcpError, AUTH_FAILURE_CODES } from './errors.ts'
import { withStoredImages, type StoredImageReader } from './stored-images.ts'
import { UpdateTranslator, type TranslateMode, type TranslatorOptions } from './updates.ts'

/** The stop reason of a turn that ended on its own; an error or an interrupted turn is an error response. */
export function stopReasonOf(result: TurnResult | undefined): StopReason {
  switch (result?.reason) {
    case 'completed':
      return 'end_turn'
    case 'aborted':
      return 'cancelled'
    case 'max-tokens':
      return 'max_tokens'
    case 'max-steps':
      return 'max_turn_requests'
    case 'blocked':
      return 'refusal'
    default: {
      const error = result?.error
      if (error && AUTH_FAILURE_CODES.has(error.code))
        throw new AcpError('AUTH_REQUIRED', error.message, { cause: error.code })
      throw new AcpError(
        'TURN_FAILED',
        error ? `the turn failed: ${error.message}` : `the turn ended without a result (${result?.reason ?? 'none'})`,
        { cause: error?.code ?? result?.reason },
      )
    }
  }
}

/**
 * One ACP session: a dsh agent on this connection, its ordered stream of updates, and its prompts (one at a
 * time, in arrival order). The session id is the dsh session id, so `session/load` finds the stored log.
 */
export class AcpSession {
  readonly translator: UpdateTranslator
  private sending: Promise<void> = Promise.resolve()
  private prompts: Promise<unknown> = Promise.resolve()
  /** Set by `session/cancel`: the running prompt answers `cancelled` whatever the turn's own end. */
  private cancelRequested = false

  constructor(
    readonly agent: Agent,
    private readonly client: AgentContext,
    options: Omit<TranslatorOptions, 'cwd'>,
    private readonly onSendError: (error: unknown) => void,
    /** Updates to send when a prompt's turn has ended (the files it changed), when a review row is mounted. */
    private readonly turnSummary: (agent: Agent) => Promise<SessionUpdate[]> = async () => [],
    /** The bytes of images the log holds by hash (a tool result's), when an attachment store is mounted. */
    private readonly storedImage?: StoredImageReader,
  ) {
    this.translator = new UpdateTranslator({ ...options, cwd: agent.cwd })
  }

  get id(): string {
    return this.agent.session.id
  }

  /** Queues updates after every earlier one (the editor sees them in log order). */
  send(updates: SessionUpdate[]): void {
    for (const update of updates) {
      this.sending = this.sending
        .then(async () =>
          this.client.notify('session/update', {
            sessionId: this.id,
            update: await withStoredImages(update, this.storedImage),
          }),
        )
        .catch(this.onSendError)
    }
  }

  /** Resolves once every queued update is written. */
  flush(): Promise<void> {
    return this.sending
  }

  /** Translates and queues one log event. */
  tell(event: SessionEvent, mode: TranslateMode): void {
    this.send(this.translator.translate(event, mode))
  }

  /** Tells the whole stored conversation again (session/load). */
  async replay(): Promise<void> {
    for (const event of this.agent.session.events) this.tell(event, 'replay')
    await this.flush()
  }

  /** Runs one prompt as one turn, after any earlier prompt; resolves with its stop reason once every update is out. */
  prompt(content: (TextBlock | ImageBlock)[]): Promise<StopReason> {
    const run = this.prompts.then(async () => {
      this.cancelRequested = false
      this.agent.followup(content)
      const result = await this.agent.whenIdle()
      this.send(await this.turnSummary(this.agent).catch(() => []))
      await this.flush()
      if (this.cancelRequested) return 'cancelled' as const
      return stopReasonOf(result)
    })
    this.prompts = run.catch(() => {})
    return run
  }

  /** `session/cancel`: stops the running turn (pending approvals are rejected by the approval service). */
  cancel(): void {
    if (!this.agent.running) return
    this.cancelRequested = true
    this.agent.cancel('cancelled by the editor')
  }
}
