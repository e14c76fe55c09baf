import { createContext, memo, useContext, useEffect, useState, type ReactNode } from 'react'
import {
  AlertTriangle,
  Ban,
  CheckCircle2,
  ChevronDown,
  ChevronRight,
  FilePen,
  FilePlus,
  FileText,
  Loader2,
  Search,
  Terminal,
  Wrench,
} from 'lucide-react'
import type { ToolItem } from '../lib/fold.ts'
import { clock, duration } from '../lib/format.ts'
import { ApprovalDecision } from './Approval.tsx'
import { useExpanded } from './RunGroup.tsx'
import { outputAddsToError, preview, printedAddsToResult } from '../lib/tool-view.ts'
import { Diff, DiffStat, diffOf } from './Diff.tsx'
import { CopyButton } from './Markdown.tsx'

const PREVIEW_LINES = 24

/** Long output shows its head (a terminal: its tail, where results and failures are); the rest is one click away. */
function Output({
  text,
  className = 'tool-output',
  from = 'head',
}: {
  text: string
  className?: string
  from?: 'head' | 'tail'
}) {
  const [all, setAll] = useState(false)
  const shown = preview(text, PREVIEW_LINES, from)
  const toggle = shown.hidden > 0 && (
    <button className="link-btn" onClick={() => setAll(!all)}>
      {all
        ? 'Show less'
        : from === 'tail'
          ? `Show ${shown.hidden} earlier lines`
          : `Show all ${shown.hidden + PREVIEW_LINES} lines`}
    </button>
  )
  return (
    <div className="output-wrap">
      {from === 'tail' && toggle}
      <CopyButton text={text} label="Copy output" />
      <pre className={className}>{all ? text : shown.text}</pre>
      {from === 'head' && toggle}
    </div>
  )
}

/** How long a call has been running, ticking each second (the card itself re-renders only when the log grows). */
function Elapsed({ since }: { since: number }) {
  const [now, setNow] = useState(() => Date.now())
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000)
    return () => clearInterval(timer)
  }, [])
  return (
    <span className="muted small" data-testid="tool-elapsed">
      {clock(now - since)}
    </span>
  )
}

/** A command too long for the card's one-line title (or spanning lines) is shown whole in the body. */
const LONG_COMMAND_CHARS = 90

const str = (value: unknown) => (typeof value === 'string' ? value : undefined)

/** What a call is about, by tool: the command, the file, the pattern. */
function describe(item: ToolItem): { icon: ReactNode; title: ReactNode; detail?: string; compact: boolean } {
  const args = (item.args && typeof item.args === 'object' ? item.args : {}) as Record<string, unknown>
  const path = str(args.path) ?? str(args.file_path)
  switch (item.name) {
    case 'bash':
      return {
        icon: <Terminal size={14} />,
        title: <code className="command">$ {str(args.command) ?? ''}</code>,
        detail: str(args.description),
        compact: false,
      }
    case 'edit':
      return {
        icon: <FilePen size={14} />,
        title: (
          <>
            Edit <code>{path}</code>
          </>
        ),
        compact: false,
      }
    case 'write':
      return {
        icon: <FilePlus size={14} />,
        title: (
          <>
            Write <code>{path}</code>
          </>
        ),
        compact: false,
      }
    case 'str_replace_editor': {
      const command = str(args.command) ?? 'view'
      const verb =
        { view: 'View', create: 'Create', str_replace: 'Edit', insert: 'Insert into', undo_edit: 'Undo edit of' }[
          command
        ] ?? command
      return {
        icon: command === 'view' ? <FileText size={14} /> : <FilePen size={14} />,
        title: (
          <>
            {verb} <code>{path}</code>
          </>
        ),
        compact: command === 'view',
      }
    }
    case 'read': {
      const range =
        typeof args.offset === 'number' || typeof args.limit === 'number'
          ? ` lines ${args.offset ?? 1}–${typeof args.limit === 'number' ? Number(args.offset ?? 1) + args.limit - 1 : 'end'}`
          : ''
      return {
        icon: <FileText size={14} />,
        title: (
          <>
            Read <code>{path}</code>
            {range}
          </>
        ),
        compact: true,
      }
    }
    case 'glob':
    case 'grep':
      return {
        icon: <Search size={14} />,
        title: (
          <>
            {item.name === 'grep' ? 'Search' : 'Find'} <code>{str(args.pattern)}</code>
            {str(args.path) ? (
              <>
                {' '}
                in <code>{str(args.path)}</code>
              </>
            ) : null}
          </>
        ),
        compact: true,
      }
    default:
      return { icon: <Wrench size={14} />, title: <code>{item.name}</code>, compact: true }
  }
}

/** The tools whose cards draw the change their arguments propose (other tools' arguments may only look like one). */
const EDITING_TOOLS = new Set(['edit', 'write', 'str_replace_editor'])

/**
 * The change an editing call makes, as a diff (read from its arguments by @dsh/session-view). `wholeFile`
 * when the text is the whole file (write, create), so its line numbers are the file's; an edit's snippet has none.
 */
function changeOf(item: ToolItem): { before: string; after: string; wholeFile: boolean } | undefined {
  const change = EDITING_TOOLS.has(item.name) ? item.change : undefined
  switch (change?.kind) {
    case 'replace':
      return {
        before: change.edits.map((edit) => edit.oldText).join('\n…\n'),
        after: change.edits.map((edit) => edit.newText).join('\n…\n'),
        wholeFile: false,
      }
    case 'write':
      return { before: '', after: change.content, wholeFile: true }
    case 'insert':
      return { before: '', after: change.text, wholeFile: false }
    default:
      return undefined
  }
}

/** What a change's card says when it did not happen (the proposed diff is shown, muted, beneath). */
const NOT_APPLIED = {
  refused: 'Refused — not applied. The proposed change:',
  unknown: 'Interrupted while it ran — the file may be partly changed. The proposed change:',
} as const

/** The keys of the calls cut because dsh stopped (their turn ended `interrupted`, or the tab lost dsh mid-turn). */
export const StoppedCalls = createContext<ReadonlySet<string>>(new Set())

function StatusIcon({ item }: { item: ToolItem }) {
  const stopped = useContext(StoppedCalls).has(item.key)
  if (item.status === 'error')
    return <AlertTriangle size={14} className="tone-error" aria-label="failed" data-testid="status-failed" />
  if (item.status === 'interrupted')
    return (
      <span className="badge badge-warn" data-testid="status-interrupted">
        <Ban size={11} /> interrupted{stopped ? ' (dsh stopped)' : ''}
      </span>
    )
  if (item.status === 'done') return <CheckCircle2 size={14} className="tone-ok" aria-label="done" />
  if (item.approval && !item.approval.decided) return <span className="badge badge-warn">waiting for you</span>
  return <Loader2 size={14} className="spin" aria-label="running" />
}

/** One tool call: bash with its output, edits as diffs, reads and searches as one compact line. */
export const ToolCard = memo(
  function ToolCard({ item }: { item: ToolItem }) {
    const { icon, title, detail, compact } = describe(item)
    const change = changeOf(item)
    const waiting = item.approval && !item.approval.decided
    const needsYou = item.status === 'error' || item.status === 'interrupted' || !!waiting
    const [expanded, setOpen] = useExpanded(
      () => !compact || needsYou,
      () => needsYou,
    )
    const notApplied = item.changeState === 'refused' || item.changeState === 'unknown' ? item.changeState : undefined
    const stats = change && !notApplied ? diffOf(change.before, change.after).stats : undefined
    const ran = item.endedAt !== undefined ? duration(item.endedAt - item.startedAt) : undefined
    const ending = item.ending
    const command = item.name === 'bash' ? str((item.args as Record<string, unknown> | undefined)?.command) : undefined
    const longCommand = command !== undefined && (command.includes('\n') || command.length > LONG_COMMAND_CHARS)
    return (
      <div
        className={`tool-card tool-${item.name} status-${item.status}${waiting ? ' waiting' : ''}${compact ? ' compact' : ''}`}
        data-testid={`tool-${item.name}`}
        data-call-id={item.callId}
      >
        <button className="tool-head" onClick={() => setOpen(!expanded)} aria-expanded={expanded}>
          {expanded ? <ChevronDown size={14} className="muted" /> : <ChevronRight size={14} className="muted" />}
          <span className="tool-icon">{icon}</span>
          <span className="tool-title" title={command}>
            {title}
          </span>
          {stats && <DiffStat stats={stats} />}
          {notApplied && (
            <span className="badge badge-error">{notApplied === 'refused' ? 'not applied' : 'outcome unknown'}</span>
          )}
          {ending && <span className="badge badge-error">{ending}</span>}
          {ran && <span className="muted small">{ran}</span>}
          {item.status === 'running' && <Elapsed since={item.startedAt} />}
          <StatusIcon item={item} />
        </button>
        {expanded && (
          <div className="tool-body">
            {detail && <p className="muted small tool-detail">{detail}</p>}
            {longCommand && <pre className="tool-command">$ {command}</pre>}
            {item.approval && (
              <div className="tool-approval">
                {waiting ? (
                  <p className="waiting-note">
                    <strong>Waiting for your approval</strong> (below): {item.approval.reason}
                  </p>
                ) : (
                  <ApprovalDecision approval={item.approval} />
                )}
              </div>
            )}
            {change && notApplied && (
              <p className="small change-not-applied" data-testid="change-not-applied">
                {NOT_APPLIED[notApplied]}
              </p>
            )}
            {change && (
              <Diff before={change.before} after={change.after} numbered={change.wholeFile} muted={!!notApplied} />
            )}
            {item.error && (
              <div className="tool-error">
                <strong>{item.error.code}</strong> {item.error.message}
              </div>
            )}
            {item.output !== undefined &&
              !(change && item.status === 'done') &&
              outputAddsToError(item.output, item.error) && (
                <Output
                  text={item.output}
                  className={item.name === 'bash' ? 'tool-output terminal' : 'tool-output'}
                  from={item.name === 'bash' ? 'tail' : 'head'}
                />
              )}
            {item.printed &&
              (item.output === undefined ||
                (item.status === 'interrupted' && printedAddsToResult(item.printed.text, item.output))) && (
                <div data-testid="tool-live-output">
                  {item.status === 'interrupted' && <p className="muted small">Printed before it was cut:</p>}
                  <Output text={item.printed.text} className="tool-output terminal" from="tail" />
                </div>
              )}
            {item.output === undefined && !change && item.name !== 'bash' && item.args !== undefined && (
              <Output text={JSON.stringify(item.args, null, 2)} />
            )}
            {item.pruned && (
              <p className="muted small tool-pruned" data-testid="tool-pruned">
                The model now sees a shortened copy of this output{item.pruned.note ? ` (${item.pruned.note})` : ''};
                the session log keeps it whole.
              </p>
            )}
          </div>
        )}
      </div>
    )
  },
  (a, b) => a.item.version === b.item.version,
)
