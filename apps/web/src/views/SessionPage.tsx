import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react'
import {
  ArrowDown,
  ChevronsDownUp,
  ChevronsUpDown,
  FileDiff,
  FolderOpen,
  GitBranch,
  Loader2,
  Lock,
  ShieldAlert,
} from 'lucide-react'
import type { InlineImage, WebCommand, WirePressure, WireRoute } from '@dsh/web-protocol'
import { ApprovalButtons } from '../components/Approval.tsx'
import { ChangesPanel } from '../components/ChangesPanel.tsx'
import { Composer } from '../components/Composer.tsx'
import { ErrorCallout } from '../components/ErrorCallout.tsx'
import { drawnHere, ItemView } from '../components/Items.tsx'
import { StoppedCalls } from '../components/ToolCard.tsx'
import { ExpansionContext, RunGroup, type Expansion } from '../components/RunGroup.tsx'
import { ContextMeter, ModelPicker, PlanModeToggle, PresetPicker } from '../components/Pickers.tsx'
import { SessionUsage } from '../components/SessionUsage.tsx'
import { TodoPanel } from '../components/TodoPanel.tsx'
import { ApiError, call, messageOf } from '../lib/api.ts'
import { imagesRefusedBy, useModels } from '../lib/catalog.ts'
import { Conversation } from '../lib/conversation.ts'
import type { Item } from '../lib/fold.ts'
import { groupRuns } from '../lib/runs.ts'
import { useEmitter } from '../lib/emitter.ts'
import { ownsEscape, useEscapeCloses } from '../lib/keys.ts'
import { navigate } from '../lib/router.ts'
import { labelOf, sessions } from '../lib/sessions.ts'

const STICK_PX = 80

/** The conversation of one session: its log by page, live, with the composer and the session's controls. */
export function SessionPage({ id, atSeq }: { id: string; atSeq?: number }) {
  const conversation = useMemo(() => new Conversation(id), [id])
  useEffect(() => {
    void conversation.open()
    return () => conversation.dispose()
  }, [conversation])
  useEmitter(conversation.changed)
  useEmitter(sessions.changed)
  const [failure, setFailure] = useState<{ code: string; message: string }>()
  const [showChanges, setShowChanges] = useState(false)
  const models = useModels()
  const { view, folded } = conversation

  const listed = sessions.items.find((item) => item.id === id)
  const agent = listed?.agent !== undefined ? listed.agent : (view?.agent ?? null)
  // A tab that lost dsh mid-turn shows the turn as stopped (conversation.lost), not as running on.
  const running = !conversation.lost && (agent === 'running' || (folded.openTurn && agent !== null))
  const route = folded.route ?? view?.route
  const preset = folded.preset ?? view?.preset
  const agentPreset = folded.agentPreset ?? view?.agentPreset
  const pressure: WirePressure | undefined =
    conversation.pressure ??
    (folded.lastUsage && folded.window
      ? (() => {
          const tokens =
            folded.lastUsage.input + folded.lastUsage.cacheRead + folded.lastUsage.cacheWrite + folded.lastUsage.output
          return { tokens, window: folded.window, ratio: tokens / folded.window, source: 'usage' as const }
        })()
      : undefined)
  const title = listed
    ? labelOf(listed)
    : ((folded.items.find((item) => item.kind === 'user') as { text?: string } | undefined)?.text ?? 'Session')

  const act = async (work: () => Promise<unknown>): Promise<boolean> => {
    setFailure(undefined)
    try {
      await work()
      return true
    } catch (error) {
      setFailure(
        error instanceof ApiError
          ? { code: error.code, message: error.message }
          : { code: 'ERROR', message: messageOf(error) },
      )
      return false
    }
  }
  // Slash commands: the composer completes them; a line naming one runs it (a user command's prompt is sent
  // as the message), an unknown `/word` is sent as text and the page says so.
  const [commands, setCommands] = useState<WebCommand[]>()
  const [commandNote, setCommandNote] = useState<string>()
  const loadCommands = useCallback(
    () =>
      void call('commands.list', { sessionId: id }).then(
        ({ commands: listed }) => setCommands(listed),
        () => setCommands(undefined),
      ),
    [id],
  )
  useEffect(loadCommands, [loadCommands])
  const sendText = (text: string, mode: 'followup' | 'steer', images: InlineImage[]) =>
    call('agent.send', { sessionId: id, text, mode, ...(images.length ? { images } : {}) })
  const send = (text: string, mode: 'followup' | 'steer', images: InlineImage[]) =>
    act(async () => {
      // What was sent and its answer are what the reader wants next, wherever they had scrolled to.
      setAtBottom(true)
      if (scroller.current) scroller.current.scrollTop = scroller.current.scrollHeight
      setCommandNote(undefined)
      if (!text.startsWith('/') || images.length) return sendText(text, mode, images)
      const outcome = await call('commands.run', { sessionId: id, line: text })
      loadCommands()
      if (outcome.error) throw new ApiError(outcome.error.code, `/${outcome.name} failed: ${outcome.error.message}`)
      if (!outcome.handled) {
        if (outcome.notice) setCommandNote(outcome.notice)
        return sendText(text, mode, images)
      }
      if (outcome.newSessionId) return navigate(`/s/${outcome.newSessionId}`)
      if (outcome.messageId === undefined) setCommandNote(outcome.output || `/${outcome.name} done.`)
    })
  const cancel = () => void act(() => call('agent.cancel', { sessionId: id }))
  useEscapeCloses(showChanges, () => setShowChanges(false))
  const setRoute = (next: WireRoute) => void act(() => call('agent.setRoute', { sessionId: id, route: next }))
  const setPreset = (next: string) => void act(() => call('agent.setPreset', { sessionId: id, preset: next }))
  const setPlanMode = (active: boolean) => void act(() => call('agent.setPlanMode', { sessionId: id, active }))
  const fork = useCallback(
    (atSeq: number) =>
      void act(async () => {
        const { sessionId } = await call('sessions.fork', { sessionId: id, atSeq })
        navigate(`/s/${sessionId}`)
      }),
    [id],
  )

  // Scrolling: follow new output while the reader is at the bottom; keep the reader's place when older
  // pages are prepended above.
  const scroller = useRef<HTMLDivElement>(null)
  const [atBottom, setAtBottom] = useState(true)
  const fromBottom = useRef(0)
  const lastStart = useRef(conversation.start)
  useLayoutEffect(() => {
    const element = scroller.current
    if (!element) return
    if (lastStart.current !== conversation.start) {
      element.scrollTop = element.scrollHeight - fromBottom.current
      lastStart.current = conversation.start
    } else if (atBottom) element.scrollTop = element.scrollHeight
  })
  const top = useRef<HTMLDivElement>(null)
  useEffect(() => {
    const sentinel = top.current
    const element = scroller.current
    if (!sentinel || !element) return
    const observer = new IntersectionObserver(
      (entries) => {
        if (entries.some((entry) => entry.isIntersecting) && conversation.loaded) {
          fromBottom.current = element.scrollHeight - element.scrollTop
          void conversation.loadOlder()
        }
      },
      { root: element, rootMargin: '400px 0px 0px 0px' },
    )
    observer.observe(sentinel)
    return () => observer.disconnect()
  }, [conversation, conversation.loaded])

  // Opening at a search hit: page back until the event is loaded, then bring the row holding it (the last
  // row created at or before it) into view, once per target.
  const jumped = useRef<number | undefined>(undefined)
  useEffect(() => {
    if (atSeq === undefined || jumped.current === atSeq || !conversation.loaded) return
    if (conversation.start > atSeq) {
      if (!conversation.loadingOlder) void conversation.loadOlder(atSeq)
      return
    }
    let target: Element | undefined
    for (const row of scroller.current?.querySelectorAll<HTMLElement>('[data-item-seq]') ?? [])
      if (Number(row.dataset.itemSeq) <= atSeq) target = row.firstElementChild ?? undefined
    if (!target) return
    jumped.current = atSeq
    setAtBottom(false)
    target.classList.add('jump-target')
    target.scrollIntoView({ block: 'center' })
  })

  // Runs of consecutive calls fold into one row each; "Expand all" / "Collapse all" opens or closes every run
  // and card (the ones that need the reader stay open).
  const shown = folded.items.filter(drawnHere)
  const rows = groupRuns(shown)
  // A search hit inside a folded run opens that run, so the row holding the event can be brought into view.
  const holder = atSeq === undefined ? undefined : shown.findLast((item) => item.seq <= atSeq)
  const revealed = holder && rows.find((row) => row.kind === 'run' && row.items.includes(holder))
  const [expansion, setExpansion] = useState<Expansion>({ open: false, gen: 0 })
  const allOpen = expansion.gen > 0 && expansion.open
  // The calls cut because dsh stopped: those of a turn that ended `interrupted`, and, while the tab has lost
  // dsh, those of the turn it was running. The last such turn, if nothing came after it, offers Continue.
  const stopped = new Set<string>()
  {
    let turn: string[] = []
    for (const item of folded.items) {
      if (item.kind === 'tool' && item.status === 'interrupted') turn.push(item.key)
      else if (item.kind === 'turn-end') {
        if (item.reason === 'interrupted') for (const key of turn) stopped.add(key)
        turn = []
      }
    }
    if (conversation.lost) for (const key of turn) stopped.add(key)
  }
  const lastItem = folded.items.at(-1)
  const continueTurn = () => void send('Continue.', 'followup', [])
  const itemRow = (item: Item) => (
    <div key={item.key} className="item-row" data-item-seq={item.seq}>
      <ItemView
        item={item}
        sessionId={id}
        onFork={item.kind === 'turn-end' && item.reason === 'completed' && !readOnly ? fork : undefined}
        onContinue={
          item === lastItem && item.kind === 'turn-end' && item.reason === 'interrupted' && !running && !readOnly
            ? continueTurn
            : undefined
        }
      />
    </div>
  )

  const pending = folded.pendingApprovals
  const readOnly = !!view?.lockedElsewhere && agent === null

  // Esc while a turn runs cancels it, as Stop does, unless something before it took the key: a field's own
  // Esc, an open dialog (lib/keys.ts), or a waiting approval (its Esc is the rejection, so no cancel then).
  const escape = useRef({ stoppable: false, cancel })
  escape.current = { stoppable: running && !pending.length && !readOnly, cancel }
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== 'Escape' || event.defaultPrevented || ownsEscape(event.target)) return
      if (!escape.current.stoppable) return
      event.preventDefault()
      escape.current.cancel()
    }
    document.addEventListener('keydown', onKey)
    return () => document.removeEventListener('keydown', onKey)
  }, [])

  return (
    <div className={`session-page${showChanges ? ' with-changes' : ''}`}>
      <header className="session-header">
        <div className="session-heading">
          <h2 title={title}>{title}</h2>
          <span className="muted mono small" title={view?.cwd}>
            <FolderOpen size={12} /> {view?.cwd}
          </span>
        </div>
        <div className="session-state">
          <ContextMeter pressure={pressure} />
          <SessionUsage sessionId={id} revision={folded.lastUsage} />
          <button
            className={`badge badge-btn${showChanges ? ' active' : ''}`}
            onClick={() => setShowChanges(!showChanges)}
            aria-pressed={showChanges}
            data-testid="changes-toggle"
          >
            <FileDiff size={11} /> Changes
          </button>
          {view?.parent && (
            <a
              className="badge"
              href={`/s/${view.parent.id}`}
              onClick={(event) => {
                event.preventDefault()
                navigate(`/s/${view.parent!.id}`)
              }}
              title="This session was forked from another"
            >
              <GitBranch size={11} /> forked
            </a>
          )}
          {running ? (
            <span className="badge badge-live" data-testid="session-status">
              <Loader2 size={11} className="spin" /> running
            </span>
          ) : readOnly ? (
            <span className="badge" data-testid="session-status" title="Another dsh process holds this session">
              <Lock size={11} /> open elsewhere
            </span>
          ) : (
            <span
              className="badge"
              data-testid="session-status"
              title={
                agent === null
                  ? 'Saved on disk and not loaded: sending a message resumes it'
                  : 'Loaded and waiting for your next message'
              }
            >
              {agent === null ? 'stored' : 'idle'}
            </span>
          )}
        </div>
      </header>

      {showChanges && (
        <ChangesPanel
          sessionId={id}
          logLength={conversation.end}
          running={running}
          onClose={() => setShowChanges(false)}
        />
      )}

      <div
        className="conversation"
        ref={scroller}
        onScroll={(event) =>
          setAtBottom(
            event.currentTarget.scrollHeight - event.currentTarget.scrollTop - event.currentTarget.clientHeight <
              STICK_PX,
          )
        }
        data-testid="conversation"
      >
        <StoppedCalls.Provider value={stopped}>
          <ExpansionContext.Provider value={expansion}>
            <div className="conversation-inner">
              <div ref={top} />
              {rows.some((row) => row.kind === 'run' || row.item.kind === 'tool') && (
                <div className="transcript-tools">
                  <button
                    className="link-btn"
                    data-testid="expand-all"
                    onClick={() => setExpansion({ open: !allOpen, gen: expansion.gen + 1 })}
                  >
                    {allOpen ? (
                      <>
                        <ChevronsDownUp size={13} /> Collapse all
                      </>
                    ) : (
                      <>
                        <ChevronsUpDown size={13} /> Expand all
                      </>
                    )}
                  </button>
                </div>
              )}
              {conversation.start > 0 && (
                <button
                  className="link-btn load-older"
                  onClick={() => void conversation.loadOlder()}
                  disabled={conversation.loadingOlder}
                >
                  {conversation.loadingOlder ? 'Loading earlier messages…' : 'Load earlier messages'}
                </button>
              )}
              {!conversation.loaded && !conversation.error && (
                <div className="muted pad">
                  <Loader2 size={14} className="spin" /> Opening session…
                </div>
              )}
              {conversation.error && <div className="callout callout-error">{conversation.error}</div>}
              {conversation.loaded && !folded.items.length && (
                <div className="muted pad center">Nothing here yet. Write the first message below.</div>
              )}
              {rows.map((row) =>
                row.kind === 'item' ? (
                  itemRow(row.item)
                ) : (
                  <div key={row.key} className="item-row run-row" data-item-seq={row.items[0]!.seq}>
                    <RunGroup run={row} render={itemRow} revealed={row === revealed} />
                  </div>
                ),
              )}
            </div>
          </ExpansionContext.Provider>
        </StoppedCalls.Provider>
      </div>

      <div className="dock">
        {!atBottom && (
          <button
            className="to-bottom icon-btn"
            onClick={() => scroller.current && (scroller.current.scrollTop = scroller.current.scrollHeight)}
            aria-label="Scroll to the latest"
          >
            <ArrowDown size={16} />
          </button>
        )}
        <TodoPanel todos={folded.todos} />
        {pending.map((approval, index) => (
          <div
            key={approval.requestId}
            className="approval-banner"
            data-testid="approval-banner"
            role="alertdialog"
            aria-label={`Approve ${approval.tool}?`}
          >
            <div className="approval-head">
              <ShieldAlert size={16} />
              <strong>Approval needed</strong>
              <span className="tool-name">{approval.tool}</span>
            </div>
            <pre className="approval-summary">{approval.summary}</pre>
            {approval.reason && <p className="approval-reason">{approval.reason}</p>}
            <ApprovalButtons approval={approval} keys={index === 0} />
          </div>
        ))}
        {failure && <ErrorCallout error={failure} testId="action-error" />}
        {commandNote && (
          <div className="callout" data-testid="command-output" role="status">
            <pre className="command-output">{commandNote}</pre>
          </div>
        )}
        {readOnly ? (
          <div className="callout">
            <Lock size={15} /> Another dsh process holds this session, so it is read-only here. Fork from a completed
            turn to continue it in this window.
          </div>
        ) : (
          <Composer
            running={running}
            imagesRefused={imagesRefusedBy(models, route)}
            onSend={send}
            onCancel={cancel}
            commands={commands}
            autoFocus
            toolbar={
              <>
                <ModelPicker route={route} onChange={setRoute} />
                <PresetPicker preset={preset} onChange={setPreset} />
                <PlanModeToggle active={folded.planMode} onChange={setPlanMode} />
                {agentPreset && (
                  <span
                    className="chip"
                    title="Agent preset (chosen when the session was created)"
                    data-testid="agent-preset"
                  >
                    {agentPreset}
                  </span>
                )}
              </>
            }
          />
        )}
      </div>
    </div>
  )
}
