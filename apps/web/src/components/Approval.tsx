import { useEffect, useRef, useState } from 'react'
import { Check, CheckCheck, ShieldAlert, ShieldCheck, ShieldX, X } from 'lucide-react'
import type { ApprovalAnswerValue } from '@dsh/web-protocol'
import { call, messageOf } from '../lib/api.ts'
import type { ApprovalInfo } from '../lib/fold.ts'
import { ownsEscape } from '../lib/keys.ts'

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

/** Whether a key press belongs to a field being typed in (the composer, the rule editor), not to the card. */
const typing = (target: EventTarget | null) =>
  target instanceof HTMLElement &&
  (target.isContentEditable ||
    target.tagName === 'INPUT' ||
    target.tagName === 'TEXTAREA' ||
    target.tagName === 'SELECT')

/**
 * Allow once / Allow for this session / Always allow in this workspace / Reject; the two standing answers
 * only when the request offers a rule. The suggested rule (`bash(git commit *)`, `write(docs/**)`) is shown in
 * an editable field: what it says when a standing answer is given is what is kept, and the server refuses a
 * rule that does not parse or does not cover this call (the error shows here and the request keeps waiting).
 * With `keys`, 1 / 2 / 3 answer once / for the session / always and Esc rejects, unless a field has the focus
 * (Esc also from the message box; an open dialog or palette takes Esc first, see lib/keys.ts).
 * Any tab may answer; if another tab already did, the log shows its answer.
 */
export function ApprovalButtons({
  approval,
  testId,
  keys = false,
}: {
  approval: ApprovalInfo
  testId?: string
  keys?: boolean
}) {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string>()
  const [rule, setRule] = useState(approval.rule ?? '')
  const answer = async (value: ApprovalAnswerValue) => {
    if (busy) return
    setBusy(true)
    setError(undefined)
    const standing = value === 'allow_session' || value === 'allow_always'
    const edited = standing && approval.rule !== undefined && rule.trim() !== approval.rule ? { rule: rule.trim() } : {}
    try {
      await call('approvals.answer', { requestId: approval.requestId, answer: value, ...edited })
    } catch (failure) {
      setError(messageOf(failure))
    } finally {
      setBusy(false)
    }
  }
  const answerRef = useRef(answer)
  answerRef.current = answer
  useEffect(() => {
    if (!keys) return
    const onKey = (event: KeyboardEvent) => {
      if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return
      // Esc passes through the message box (it is the reader's "no"); the digits are typed there.
      if (event.key === 'Escape' ? ownsEscape(event.target) : typing(event.target)) return
      const chosen: ApprovalAnswerValue | undefined =
        event.key === '1'
          ? 'allow_once'
          : event.key === 'Escape'
            ? 'reject'
            : approval.rule && event.key === '2'
              ? 'allow_session'
              : approval.rule && event.key === '3'
                ? 'allow_always'
                : undefined
      if (!chosen) return
      event.preventDefault()
      void answerRef.current(chosen)
    }
    document.addEventListener('keydown', onKey)
    return () => document.removeEventListener('keydown', onKey)
  }, [keys, approval.rule])
  const key = (label: string) => (keys ? <kbd className="approval-key">{label}</kbd> : null)
  return (
    <div className="approval-buttons" data-testid={testId}>
      <button className="btn btn-primary" disabled={busy} onClick={() => void answer('allow_once')}>
        <Check size={14} /> Allow once {key('1')}
      </button>
      {approval.rule && (
        <>
          <button
            className="btn"
            disabled={busy}
            title={`Keeps ${rule.trim()} until this session ends`}
            onClick={() => void answer('allow_session')}
          >
            <CheckCheck size={14} /> Allow for this session {key('2')}
          </button>
          <button
            className="btn"
            disabled={busy}
            title={`Keeps ${rule.trim()} for every session in this workspace`}
            onClick={() => void answer('allow_always')}
          >
            <CheckCheck size={14} /> Always allow in this workspace {key('3')}
          </button>
          <label className="approval-rule-field">
            <span className="muted">Rule to keep</span>
            <input
              className="approval-rule"
              data-testid="approval-rule"
              aria-label="Rule to keep"
              spellCheck={false}
              value={rule}
              disabled={busy}
              onChange={(event) => setRule(event.target.value)}
              onKeyDown={(event) => {
                // Esc in the field puts the suggestion back and hands the keys to the card again.
                if (event.key === 'Escape') {
                  event.preventDefault()
                  setRule(approval.rule ?? '')
                  event.currentTarget.blur()
                }
              }}
            />
          </label>
        </>
      )}
      <button className="btn" disabled={busy} onClick={() => void answer('reject')}>
        <X size={14} /> Reject {key('Esc')}
      </button>
      {error && (
        <span className="inline-error" data-testid="approval-error" role="alert">
          {error}
        </span>
      )}
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
