import type { ApprovalAnswer, ApprovalReply, ApprovalRequest } from '@dsh/approval'
import { WebError } from '@dsh/webserver'

interface Pending {
  request: ApprovalRequest
  resolve: (answer: ApprovalReply) => void
}

/**
 * Approval requests waiting for a tab. Every tab watching the session sees the request (it is in the log:
 * `approval/asked`); whichever answers first decides, and the others see `approval/decided` arrive and
 * get CONFLICT if they answer too. A cancelled turn or a timeout (ctx.approval's) withdraws the request.
 */
export class PendingApprovals {
  private readonly pending = new Map<string, Pending>()

  constructor(private readonly changed: (sessionId: string) => void) {}

  ask(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalReply> {
    return new Promise((resolve) => {
      const withdraw = () => {
        if (this.pending.delete(request.requestId)) this.changed(request.sessionId)
      }
      this.pending.set(request.requestId, {
        request,
        resolve: (answer) => {
          signal.removeEventListener('abort', withdraw)
          resolve(answer)
        },
      })
      signal.addEventListener('abort', withdraw, { once: true })
      this.changed(request.sessionId)
    })
  }

  /**
   * Answers a waiting request. `rule` (with a standing answer) replaces the suggested rule; `checkRule` must
   * accept it (it parses and covers this call) or the answer is refused with its reason and the request keeps
   * waiting, so the card can show the error and the person can correct the rule.
   */
  answer(
    requestId: string,
    answer: ApprovalAnswer,
    rule?: string,
    checkRule?: (request: ApprovalRequest, rule: string) => string,
  ): void {
    const entry = this.pending.get(requestId)
    if (!entry)
      throw new WebError(
        'CONFLICT',
        'this approval is no longer waiting: another tab answered it first, or its turn ended',
      )
    const standing = answer === 'allow_session' || answer === 'allow_always'
    if (standing && !entry.request.rule)
      throw new WebError(
        'BAD_PARAMS',
        `this approval offers no rule to keep, so it can only be answered allow_once or reject (got ${answer})`,
      )
    let kept: string | undefined
    if (rule !== undefined) {
      if (!standing)
        throw new WebError('BAD_PARAMS', `an edited rule comes with allow_session or allow_always, not ${answer}`)
      if (!checkRule)
        throw new WebError('UNAVAILABLE', 'no grant store is mounted, so an edited rule cannot be checked or kept')
      try {
        kept = checkRule(entry.request, rule)
      } catch (error) {
        throw new WebError('BAD_PARAMS', error instanceof Error ? error.message : String(error))
      }
    }
    this.pending.delete(requestId)
    entry.resolve(kept === undefined ? { answer } : { answer, rule: kept })
    this.changed(entry.request.sessionId)
  }

  of(sessionId: string): string[] {
    return [...this.pending.values()]
      .filter((entry) => entry.request.sessionId === sessionId)
      .map((entry) => entry.request.requestId)
  }

  count(sessionId: string): number {
    return this.of(sessionId).length
  }
}
