import { useState } from 'react'
import { Check, CheckCheck, ShieldAlert, ShieldCheck, ShieldX, X } from 'lucide-react'
import type { ApprovalAnswerValue } from '@dsh/web-protocol'
import { call, messageOf } from '../lib/api.ts'
import type { ApprovalInfo } from '../lib/fold.ts'

const ANSWERED: Record<ApprovalAnswerValue, string> = {
  allow_once: 'Allowed once',
  allow_session: 'Allowed for this session',
  allow_always: 'Always allowed in this workspace',
  reject: 'Rejected',
}

const BY: Record<string, string> = {
  user: 'by you',
  policy: 'by the approval policy',
  grant: 'by a standing grant or rule',
  timeout: 'because nobody answered in time',
  'no-answerer': 'because nobody could answer',
  cancelled: 'because the turn was cancelled',
  error: 'because answering failed',
}

/**
 * Allow once / Allow for this session / Always allow in this workspace / Reject; the two standing answers
 * only when the request offers a rule (shown, so the person sees what would be kept). Any tab may answer; if
 * another tab already did, the log shows its answer.
 */
export function ApprovalButtons({ approval, testId }: { approval: ApprovalInfo; testId?: string }) {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string>()
  const answer = async (value: ApprovalAnswerValue) => {
    setBusy(true)
    setError(undefined)
    try {
      await call('approvals.answer', { requestId: approval.requestId, answer: value })
    } catch (failure) {
      setError(messageOf(failure))
    } finally {
      setBusy(false)
    }
  }
  return (
    <div className="approval-buttons" data-testid={testId}>
      <button className="btn btn-primary" disabled={busy} onClick={() => void answer('allow_once')}>
        <Check size={14} /> Allow once
      </button>
      {approval.rule && (
        <>
          <button className="btn" disabled={busy} title={`Keeps ${approval.rule} until this session ends`} onClick={() => void answer('allow_session')}>
            <CheckCheck size={14} /> Allow for this session
          </button>
          <button className="btn" disabled={busy} title={`Keeps ${approval.rule} for every session in this workspace`} onClick={() => void answer('allow_always')}>
            <CheckCheck size={14} /> Always allow in this workspace
          </button>
          <code className="approval-rule" data-testid="approval-rule">
            {approval.rule}
          </code>
        </>
      )}
      <button className="btn" disabled={busy} onClick={() => void answer('reject')}>
        <X size={14} /> Reject
      </button>
      {error && <span className="inline-error">{error}</span>}
    </div>
  )
}

export function ApprovalDecision({ approval }: { approval: ApprovalInfo }) {
  const decided = approval.decided
  if (!decided) return null
  const allowed = decided.answer !== 'reject'
  return (
    <div className={`approval-decided ${allowed ? 'ok' : 'no'}`} data-testid="approval-decided">
      {allowed ? <ShieldCheck size={14} /> : <ShieldX size={14} />}
      {ANSWERED[decided.answer] ?? decided.answer} {BY[decided.by] ?? `(${decided.by})`}
      {decided.note && decided.by !== 'user' && <span className="muted"> — {decided.note}</span>}
    </div>
  )
}

/**
 * A request in the conversation, where it was asked: what it asked and how it was decided. While it waits,
 * the card above the composer (one place to answer, always in view) carries the buttons.
 */
export function ApprovalCard({ approval }: { approval: ApprovalInfo }) {
  return (
    <div className={`approval-card${approval.decided ? ' settled' : ''}`} data-testid="approval-card">
      <div className="approval-head">
        <ShieldAlert size={16} />
        <strong>{approval.decided ? 'Approval' : 'Waiting for your approval'}</strong>
        <span className="tool-name">{approval.tool}</span>
      </div>
      <pre className="approval-summary">{approval.summary}</pre>
      {approval.reason && <p className="approval-reason">{approval.reason}</p>}
      <ApprovalDecision approval={approval} />
    </div>
  )
}
