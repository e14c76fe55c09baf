import { memo, useState } from 'react'
import {
  AlertTriangle,
  Ban,
  Brain,
  CheckCircle2,
  ChevronDown,
  ChevronRight,
  GitBranch,
  Info,
  Play,
  RefreshCw,
  User,
} from 'lucide-react'
import type { Item } from '../lib/fold.ts'
import { compact, duration } from '../lib/format.ts'
import { ApprovalCard } from './Approval.tsx'
import { ErrorCallout } from './ErrorCallout.tsx'
import { MessageImages } from './Images.tsx'
import { Markdown } from './Markdown.tsx'
import { SubagentCard } from './SubagentCard.tsx'
import { ToolCard } from './ToolCard.tsx'

type Of<K extends Item['kind']> = Extract<Item, { kind: K }>

function Reasoning({ text, streaming }: { text: string; streaming: boolean }) {
  const [open, setOpen] = useState<boolean>()
  // Open while the model is thinking (so it can be followed), folded once the answer starts.
  const expanded = open ?? streaming
  return (
    <div className={`reasoning${expanded ? ' open' : ''}`} data-testid="reasoning">
      <button className="reasoning-head" onClick={() => setOpen(!expanded)} aria-expanded={expanded}>
        {expanded ? <ChevronDown size={14} /> : <ChevronRight size={14} />}
        <Brain size={14} /> {streaming ? 'Thinking…' : 'Thought'}
        {!expanded && <span className="muted small">{compact(Math.round(text.length / 4))} tokens</span>}
      </button>
      {expanded && <div className="reasoning-body">{text}</div>}
    </div>
  )
}

function UserMessage({ item, sessionId }: { item: Of<'user'>; sessionId: string }) {
  return (
    <div className={`msg msg-user${item.source === 'steer' ? ' steer' : ''}`} data-testid="user-message">
      <div className="msg-avatar">
        <User size={14} />
      </div>
      <div className="msg-body">
        {item.source === 'steer' && <span className="badge">steering</span>}
        <div className="user-text">{item.text}</div>
        {item.images.length > 0 && <MessageImages sessionId={sessionId} images={item.images} />}
      </div>
    </div>
  )
}

function AssistantMessage({ item }: { item: Of<'assistant'> }) {
  return (
    <div className={`msg msg-assistant${item.streaming ? ' streaming' : ''}`} data-testid="assistant-message">
      {item.reasoning && <Reasoning text={item.reasoning} streaming={item.streaming && !item.text} />}
      {item.text && <Markdown text={item.text} />}
      {item.streaming && !item.text && <span className="cursor" aria-hidden />}
      {item.interrupted && <div className="muted small">(stopped before the answer was complete)</div>}
      {item.error && <ErrorCallout error={item.error} />}
    </div>
  )
}

function Notice({ item }: { item: Of<'notice'> }) {
  return (
    <div
      className={`notice notice-${item.tone}`}
      data-testid="notice"
      role={item.tone === 'muted' ? 'status' : undefined}
    >
      {item.tone === 'warn' ? (
        <AlertTriangle size={12} />
      ) : item.tone === 'muted' ? (
        <RefreshCw size={11} />
      ) : (
        <Info size={12} />
      )}{' '}
      {item.text}
    </div>
  )
}

const ENDINGS: Record<string, { label: string; tone: 'ok' | 'muted' | 'warn' | 'error' }> = {
  completed: { label: 'Done', tone: 'ok' },
  aborted: { label: 'Cancelled', tone: 'muted' },
  blocked: { label: 'Blocked', tone: 'warn' },
  error: { label: 'Failed', tone: 'error' },
  'max-tokens': { label: 'Stopped: the answer hit the output token limit', tone: 'warn' },
  'max-steps': { label: 'Stopped: the turn hit its step limit (send a message to let it continue)', tone: 'warn' },
  interrupted: { label: 'Interrupted: dsh stopped during this turn', tone: 'warn' },
}

function TurnEnd({
  item,
  onFork,
  onContinue,
}: {
  item: Of<'turn-end'>
  onFork?: (seq: number) => void
  onContinue?: () => void
}) {
  const ending = ENDINGS[item.reason] ?? { label: item.reason, tone: 'muted' }
  const tokens = item.usage.input + item.usage.cacheRead + item.usage.cacheWrite
  return (
    <div className={`turn-end turn-${ending.tone}`} data-testid="turn-end" data-reason={item.reason}>
      {item.error && <ErrorCallout error={item.error} />}
      <div className="turn-foot">
        {ending.tone === 'ok' ? (
          <CheckCircle2 size={13} />
        ) : ending.tone === 'muted' ? (
          <Ban size={13} />
        ) : (
          <AlertTriangle size={13} />
        )}
        <span>{ending.label}</span>
        {item.startedAt !== undefined && <span className="muted">· {duration(item.endedAt - item.startedAt)}</span>}
        {(tokens > 0 || item.usage.output > 0) && (
          <span
            className="muted"
            title={`${item.usage.input} uncached input, ${item.usage.cacheRead} cached, ${item.usage.cacheWrite} cache writes, ${item.usage.output} output`}
          >
            · {compact(tokens)} in{item.usage.cacheRead ? ` (${compact(item.usage.cacheRead)} cached)` : ''} ·{' '}
            {compact(item.usage.output)} out
          </span>
        )}
        {onContinue && (
          <button
            className="btn btn-primary continue"
            onClick={onContinue}
            data-testid="continue-turn"
            title="Send a message asking the agent to carry on where the turn was cut"
          >
            <Play size={13} /> Continue
          </button>
        )}
        {onFork && (
          <button
            className="link-btn fork"
            onClick={() => onFork(item.seq)}
            title="Start a new session with the conversation up to here"
          >
            <GitBranch size={13} /> Fork from here
          </button>
        )}
      </div>
    </div>
  )
}

/** Whether an item gets a row of its own: a call the fold says another item shows (a `task` call, drawn as its subagent's card) does not. */
export const drawnHere = (item: Item): boolean => !(item.kind === 'tool' && item.shownBy !== undefined)

/** One row of the conversation; re-renders only when its own events changed. */
export const ItemView = memo(
  function ItemView({
    item,
    sessionId,
    onFork,
    onContinue,
  }: {
    item: Item
    sessionId: string
    onFork?: (seq: number) => void
    onContinue?: () => void
  }) {
    switch (item.kind) {
      case 'user':
        return <UserMessage item={item} sessionId={sessionId} />
      case 'assistant':
        return <AssistantMessage item={item} />
      case 'tool':
        return <ToolCard item={item} />
      case 'approval':
        return <ApprovalCard approval={item.approval} />
      case 'notice':
        return <Notice item={item} />
      case 'turn-end':
        return <TurnEnd item={item} onFork={onFork} onContinue={onContinue} />
      case 'subagent':
        return <SubagentCard item={item} />
    }
  },
  (a, b) =>
    a.item.version === b.item.version &&
    a.item.key === b.item.key &&
    !!a.onFork === !!b.onFork &&
    !!a.onContinue === !!b.onContinue,
)
