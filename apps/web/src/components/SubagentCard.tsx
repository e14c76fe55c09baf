import { Bot } from 'lucide-react'
import type { Item } from '../lib/fold.ts'
import { duration } from '../lib/format.ts'
import { navigate } from '../lib/router.ts'
import { ErrorCallout } from './ErrorCallout.tsx'

type SubagentItem = Extract<Item, { kind: 'subagent' }>

const STATUS: Record<SubagentItem['status'], string> = {
  running: 'Running…',
  completed: 'Done',
  failed: 'Failed',
  aborted: 'Cancelled',
}

/** A child agent this session started: what it does, its status, and a link to its own session. */
export function SubagentCard({ item }: { item: SubagentItem }) {
  const href = `/s/${item.childSessionId}`
  return (
    <div
      className={`subagent-card subagent-${item.status}`}
      data-testid="subagent-card"
      data-status={item.status}
      data-child={item.childSessionId}
      data-call-id={item.callId}
    >
      <div className="subagent-head">
        <Bot size={14} /> <strong>{item.description}</strong> <span className="badge">{item.agentType}</span>
        <span className="muted small">
          {STATUS[item.status]}
          {item.endedAt !== undefined && ` · ${duration(item.endedAt - item.startedAt)}`} · ceiling {item.ceiling}
        </span>
        <a
          className="link-btn"
          href={href}
          onClick={(event) => {
            event.preventDefault()
            navigate(href)
          }}
        >
          Open its session
        </a>
      </div>
      {item.error && <ErrorCallout error={item.error} />}
    </div>
  )
}
