import type { ApprovalAnswer, ApprovalRequest } from '@dsh/approval'
import { WebError } from '@dsh/webserver'

interface Pending {
  request: ApprovalRequest
  resolve: (answer: ApprovalAnswer) => void
}

/**
 * Approval requests waiting for a tab. Every tab watching the session sees the request (it is in the log:
 * `approval/asked`); whichever answers first decides, and the others see `approval/decided` arrive and
 * get CONFLICT if they answer too. A cancelled turn or a timeout (ctx.approval's) withdraws the request.
 */
export class PendingApprovals {
  private readonly pending = new Map<string, Pending>()

  constructor(private readonly changed: (sessionId: string) => void) {}

  ask(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
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

  answer(requestId: string, answer: ApprovalAnswer): void {
    const entry = this.pending.get(requestId)
    if (!entry) throw new WebError('CONFLICT', 'this approval is no longer waiting: another tab answered it first, or its turn ended')
    if ((answer === 'allow_session' || answer === 'allow_always') && !entry.request.rule)
      throw new WebError('BAD_PARAMS', `this approval offers no rule to keep, so it can only be answered allow_once or reject (got ${answer})`)
    this.pending.delete(requestId)
    entry.resolve(answer)
    this.changed(entry.request.sessionId)
  }

  of(sessionId: string): string[] {
    return [...this.pending.values()].filter((entry) => entry.request.sessionId === sessionId).map((entry) => entry.request.requestId)
  }

  count(sessionId: string): number {
    return this.of(sessionId).length
  }
}
