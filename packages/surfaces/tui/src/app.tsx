// The Ink app (docs/architecture.md, "Surfaces: terminal UI"): finished items go to the scrollback once
// (Ink's <Static>), and only the live region below them — running items, the approval, the input — redraws.
import { stripVTControlCharacters } from 'node:util'
import { useReducer, useRef, useSyncExternalStore } from 'react'
import { Box, Static, Text, useInput } from 'ink'
import type { Item } from '@dsh/session-view'
import type { TuiController } from './controller.ts'
import { itemLines, type Line } from './lines.ts'
import type { Theme } from './theme.ts'
import { oneLine } from './text.ts'

export interface AppProps {
  controller: TuiController
  theme: Theme
  completionRows: number
}

export function App({ controller, theme, completionRows }: AppProps) {
  const snap = useSyncExternalStore(controller.subscribe, controller.getSnapshot)
  useInput((input, key) => {
    // Ctrl+C anywhere: once arms (and cancels a running turn), twice exits.
    if (key.ctrl && input === 'c') {
      if (!controller.interruptKey()) controller.cancel()
    }
  })
  return (
    <>
      <Static items={[...snap.entries]}>
        {(entry) => <Lines key={entry.key} lines={entry.lines} theme={theme} />}
      </Static>
      <Box flexDirection="column">
        {snap.live.map((item) => (
          <LiveItem key={item.key} item={item} controller={controller} theme={theme} />
        ))}
        {snap.picker ? (
          <Picker controller={controller} theme={theme} />
        ) : snap.approval ? (
          <Approval controller={controller} theme={theme} />
        ) : (
          <Editor controller={controller} theme={theme} rows={completionRows} />
        )}
        <Text color={theme.color('muted')} dimColor={theme.dim('muted')} wrap="truncate-end">
          {status(snap)}
        </Text>
      </Box>
    </>
  )
}

function status(snap: ReturnType<TuiController['getSnapshot']>): string {
  const parts = [`dsh · ${snap.route}`]
  if (snap.planMode) parts.push('plan mode (Shift+Tab leaves)')
  if (snap.sessionId) parts.push(snap.sessionId)
  if (snap.running) parts.push('working… Esc cancels')
  if (snap.exitArmed) parts.push('press Ctrl+C again to exit')
  return parts.join(' · ')
}

export function Lines({ lines, theme }: { lines: readonly Line[]; theme: Theme }) {
  return (
    <Box flexDirection="column">
      {lines.map((line, i) => (
        <Text key={i} color={theme.color(line.tone)} dimColor={theme.dim(line.tone)} bold={line.bold}>
          {line.text || ' '}
        </Text>
      ))}
    </Box>
  )
}

function LiveItem({ item, controller, theme }: { item: Item; controller: TuiController; theme: Theme }) {
  return <Lines lines={itemLines(item, controller.lineOptions)} theme={theme} />
}

function Approval({ controller, theme }: { controller: TuiController; theme: Theme }) {
  const pending = controller.getSnapshot().approval!
  const { request } = pending
  useInput((input, key) => {
    if (key.escape || input === 'n' || input === '4') controller.answer('reject')
    else if (input === 'y' || input === '1') controller.answer('allow_once')
    else if (input === 's' || input === '2') controller.answer('allow_session')
    else if (input === 'a' || input === '3') controller.answer('allow_always')
  })
  const accent = theme.color('accent')
  return (
    <Box flexDirection="column" borderStyle="round" borderColor={accent} paddingX={1}>
      <Text bold color={accent}>
        Allow {oneLine(request.summary, 400)}?
      </Text>
      {request.reason ? <Text color={theme.color('muted')}>{oneLine(request.reason, 400)}</Text> : null}
      <Text>
        [y] once
        {request.rule ? `  [s] this session  [a] always in this workspace: ${oneLine(request.rule, 200)}` : ''} [n]
        reject
      </Text>
    </Box>
  )
}

function Picker({ controller, theme }: { controller: TuiController; theme: Theme }) {
  const rows = controller.getSnapshot().picker!
  const [selected, setSelected] = useReducer((_: number, next: number) => next, 0)
  useInput((_input, key) => {
    if (key.upArrow) setSelected(Math.max(0, selected - 1))
    else if (key.downArrow) setSelected(Math.min(rows.length - 1, selected + 1))
    else if (key.escape) controller.closePicker()
    else if (key.return)
      void controller
        .openSession(rows[selected]!.id)
        .catch((error) => controller.note(String(error?.message ?? error), 'error'))
  })
  return (
    <Box flexDirection="column">
      <Text bold>Resume a session (↑/↓, Enter opens, Esc starts a new one):</Text>
      {rows.map((row, i) => (
        <Text key={row.id} inverse={i === selected} color={i === selected ? undefined : theme.color('muted')}>
          {i === selected ? '› ' : '  '}
          {new Date(row.updatedAt).toISOString().slice(0, 16).replace('T', ' ')} {row.turns} turn
          {row.turns === 1 ? '' : 's'} {oneLine(row.title ?? row.firstPrompt ?? '(no prompt)', 60)} · {row.id}
        </Text>
      ))}
    </Box>
  )
}

interface EditorState {
  text: string
  cursor: number
  /** Position in the history while browsing it (entries.length: the draft). */
  browsing: number | undefined
  draft: string
  selected: number
  /** The input Esc closed the suggestion list on (it stays closed until the input changes). */
  dismissed?: string
}

// eslint-disable-next-line no-control-regex -- dropping control characters is the point
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g

/** Typed or pasted text as the input keeps it: line breaks as `\n`, nothing else that is not printable. */
export function inputText(input: string): string {
  return stripVTControlCharacters(input.replace(/\r\n?/g, '\n')).replace(CONTROL, '')
}

interface Suggestion {
  key: string
  label: string
  /** The input once this suggestion is taken. */
  text: string
  cursor: number
}

/** `/` completes a command (the whole input is `/word`); `@` completes a path of the workspace at the cursor. */
function suggestions(text: string, cursor: number, controller: TuiController): Suggestion[] {
  const command = /^\/([a-z0-9_-]*)$/.exec(text)
  if (command)
    return controller
      .commands()
      .filter((info) => info.name.startsWith(command[1]!))
      .filter((info) => text !== `/${info.name} `)
      .map((info) => ({
        key: `/${info.name}`,
        label: `/${info.name}${info.argumentHint ? ` ${oneLine(info.argumentHint, 30)}` : ''} — ${oneLine(info.description, 80)}${info.origin !== 'dsh' && info.origin !== 'tui' ? ` (${oneLine(info.origin, 40)})` : ''}`,
        text: `/${info.name} `,
        cursor: info.name.length + 2,
      }))
  const before = text.slice(0, cursor)
  const mention = /(?:^|\s)@([^\s@]*)$/.exec(before)
  if (!mention) return []
  const start = cursor - mention[1]!.length
  return controller.files(mention[1]!).map((entry) => {
    const inserted = entry.dir ? entry.path : `${entry.path} `
    return {
      key: `@${entry.path}`,
      label: `@${entry.path}`,
      text: text.slice(0, start) + inserted + text.slice(cursor),
      cursor: start + inserted.length,
    }
  })
}

function Editor({ controller, theme, rows }: { controller: TuiController; theme: Theme; rows: number }) {
  // The state lives in a ref: keys arriving faster than renders each see the previous key's edit.
  const state = useRef<EditorState>({ text: '', cursor: 0, browsing: undefined, draft: '', selected: 0 })
  const [, rerender] = useReducer((n: number) => n + 1, 0)
  const s = state.current
  const shownFor = (text: string, cursor: number) => (s.dismissed === text ? [] : suggestions(text, cursor, controller))
  const matches = shownFor(s.text, s.cursor)
  const set = (text: string, cursor = text.length) => {
    s.text = text
    s.cursor = cursor
    s.selected = 0
    rerender()
  }
  const insert = (chunk: string) =>
    set(s.text.slice(0, s.cursor) + chunk + s.text.slice(s.cursor), s.cursor + chunk.length)
  useInput((input, key) => {
    const found = shownFor(s.text, s.cursor)
    const choice = found[Math.min(s.selected, found.length - 1)]
    if (key.ctrl && input === 'c') {
      set('')
      return
    }
    if (key.ctrl && input === 'd') {
      if (!s.text) controller.exit()
      return
    }
    if (key.tab && key.shift) return controller.togglePlan()
    if (key.escape) {
      // Esc closes a suggestion list first; with none open it cancels the running turn.
      if (found.length) {
        s.dismissed = s.text
        return rerender()
      }
      controller.cancel()
      return
    }
    if (key.return && key.meta) return insert('\n')
    if ((key.ctrl && input === 'j') || input === '\n') return insert('\n')
    if (key.tab) {
      if (choice) set(choice.text, choice.cursor)
      return
    }
    // Text and Enter in one read (typed fast, typed before the terminal was in raw mode, or a one-line paste
    // ending in a newline): the text, then a send.
    const typedThenEnter = input.length > 1 && /^[^\r\n]+[\r\n]$/.test(input)
    if (typedThenEnter) insert(input.slice(0, -1))
    if (key.return || typedThenEnter) {
      // Enter on a suggestion takes it, except a command already typed in full, which is sent.
      if (choice && !(choice.key.startsWith('/') && s.text === choice.key)) return set(choice.text, choice.cursor)
      const text = s.text
      controller.forgetFiles()
      s.browsing = undefined
      set('')
      void controller.submit(text).catch((error) => controller.note(String(error?.message ?? error), 'error'))
      return
    }
    if (key.upArrow || key.downArrow) {
      if (found.length) {
        s.selected = (s.selected + (key.upArrow ? found.length - 1 : 1)) % found.length
        return rerender()
      }
      const entries = controller.history.entries
      if (s.text.includes('\n') && s.browsing === undefined) return
      const at = s.browsing ?? entries.length
      const next = key.upArrow ? Math.max(0, at - 1) : Math.min(entries.length, at + 1)
      if (s.browsing === undefined) s.draft = s.text
      s.browsing = next
      return set(next === entries.length ? s.draft : entries[next]!)
    }
    if (key.leftArrow) return set(s.text, Math.max(0, s.cursor - 1))
    if (key.rightArrow) return set(s.text, Math.min(s.text.length, s.cursor + 1))
    if (key.home || (key.ctrl && input === 'a')) return set(s.text, s.text.lastIndexOf('\n', s.cursor - 1) + 1)
    if (key.end || (key.ctrl && input === 'e')) {
      const end = s.text.indexOf('\n', s.cursor)
      return set(s.text, end < 0 ? s.text.length : end)
    }
    if (key.ctrl && input === 'u') return set('')
    if (key.backspace || key.delete) {
      if (s.cursor === 0) return
      return set(s.text.slice(0, s.cursor - 1) + s.text.slice(s.cursor), s.cursor - 1)
    }
    // Several erase keys in one read.
    if (/^[\x7f\b]+$/.test(input)) {
      const cut = Math.min(s.cursor, input.length)
      return set(s.text.slice(0, s.cursor - cut) + s.text.slice(s.cursor), s.cursor - cut)
    }
    if (key.ctrl || (key.meta && !input)) return
    // Typed or pasted text: a pasted line break is a new line, not a send; other control characters and escape
    // sequences are dropped (they would reach the terminal when the input is drawn).
    const text = inputText(input)
    if (text) {
      if (s.text === '' && text === '/') void controller.refreshCommands()
      insert(text)
    }
  })
  const before = s.text.slice(0, s.cursor)
  const at = s.text.slice(s.cursor, s.cursor + 1)
  const after = s.text.slice(s.cursor + 1)
  const shown = matches.slice(0, rows)
  const selected = Math.min(s.selected, Math.max(0, matches.length - 1))
  return (
    <Box flexDirection="column">
      <Box>
        <Text color={theme.color('user')} bold>
          {'› '}
        </Text>
        <Text>
          {before}
          <Text inverse>{at === '\n' || !at ? ' ' : at}</Text>
          {at === '\n' ? '\n' : ''}
          {after}
        </Text>
      </Box>
      {shown.map((suggestion, i) => (
        <Text key={suggestion.key} inverse={i === selected} color={i === selected ? undefined : theme.color('muted')}>
          {i === selected ? '› ' : '  '}
          {suggestion.label}
        </Text>
      ))}
      {matches.length > rows ? <Text color={theme.color('muted')}> … {matches.length - rows} more</Text> : null}
    </Box>
  )
}
