// The terminal UI as a user sees it: the real `dsh` in a real pseudo-terminal against the mock model, the
// screen read through a terminal emulator. One dsh process for the whole story (cheap).
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { KEYS } from '@dsh/terminal-driver'
import { makeWorld, storedSessions, type World } from './test-support/world.ts'

let world: World
beforeAll(async () => {
  world = await makeWorld()
})
afterAll(async () => {
  await world?.dispose()
})

test('a prompt streams its answer; a key approves a command that then runs; Esc interrupts a turn; resize reflows; Ctrl+D exits 0 with the session stored', async () => {
  world.llm.enqueue({ reasoning: 'The user greets me.', text: ['Hello ', 'from the ', 'mock model.'] })
  const t = world.open([])
  await t.waitFor('dsh · deepseek/', 'the status line')
  t.type('hello there')
  await t.waitFor('› hello there', 'the typed text echoed')
  t.type(KEYS.enter)
  await t.waitFor('Hello from the mock model.', 'the streamed answer')
  await t.waitFor(/── done in/, 'the turn end')
  expect(t.text()).toContain('∴ thinking (1 line, folded)')
  expect(t.text()).not.toContain('The user greets me.')

  // A message of two lines (Ctrl+J is a new line, Enter sends), then ↑ brings it back from the history.
  world.llm.enqueue({ text: 'Two lines received.' })
  t.type('line one')
  await t.waitFor('› line one', 'the first line')
  t.type(KEYS.ctrlJ)
  t.type('line two')
  await t.waitFor(/› line one\s*\n {2}line two/, 'the second line under the first')
  t.type(KEYS.enter)
  await t.waitFor('Two lines received.', 'the answer to the two lines')
  t.type(KEYS.up)
  await t.waitFor(() => /› line one\s*\n {2}line two/.test(t.screen().join('\n')), 'the message back from the history')
  t.type('\x15') // Ctrl+U: clear
  await t.waitFor(() => t.screen().some((row) => /^›\s*$/.test(row)), 'the cleared input')

  // Shift+Tab: plan mode on, and off again (each a logged plan/mode by user:tui).
  t.type(KEYS.shiftTab)
  await t.waitFor('plan mode (Shift+Tab leaves)', 'plan mode on')
  t.type(KEYS.shiftTab)
  await t.waitFor(() => !t.screen().some((row) => row.includes('plan mode (')), 'plan mode off')

  // An unconfined command asks; `y` answers once and the command runs (its file is on disk).
  world.llm.enqueue(
    {
      toolCalls: [
        {
          id: 'b1',
          name: 'bash',
          arguments: { command: 'touch approved.txt && echo made it', sandbox: false, justification: 'the test asks' },
        },
      ],
    },
    { text: 'The file is there.' },
  )
  t.type('make the file')
  await t.waitFor('› make the file', 'the second prompt echoed')
  t.type(KEYS.enter)
  await t.waitFor('[y] once', 'the approval prompt')
  expect(existsSync(join(world.repo, 'approved.txt'))).toBe(false)
  expect(t.text()).toContain('[s] this session')
  t.type('y')
  await t.waitFor('The file is there.', 'the answer after the command')
  expect(existsSync(join(world.repo, 'approved.txt'))).toBe(true)
  const card = t.text()
  expect(card).toMatch(/✓ bash.*touch approved\.txt.*exit 0/)
  expect(card).toContain('│ made it')

  // A turn that hangs: Esc cancels it and it shows interrupted.
  world.llm.enqueue({ text: ['Working on it', ' forever'], stallAfterChunks: 2 })
  t.type('take forever')
  await t.waitFor('› take forever', 'the third prompt echoed')
  t.type(KEYS.enter)
  await t.waitFor('working… Esc cancels', 'the running turn')
  t.type(KEYS.escape)
  await t.waitFor('── turn interrupted', 'the interrupted turn')

  // Resize: the live region is drawn again at the new width.
  // The resize reaches dsh as SIGWINCH, after the emulator has reflowed: keys typed before dsh redraws would
  // be drawn at the old width and leave a stale row. Ink writes its redraw at once on a narrower terminal.
  const beforeResize = t.raw.length
  t.resize(60, 20)
  await t.waitFor(() => t.raw.length > beforeResize, 'the redraw at 60 columns')
  t.type('/us')
  await t.waitFor(() => t.screen().some((row) => row.startsWith('› /usage — ')), 'the completion at 60 columns')
  t.type(KEYS.enter)
  await t.waitFor(() => t.screen().some((row) => /^› \/usage\s*$/.test(row)), 'the completed command in the input')
  t.type(KEYS.enter)
  await t.waitFor(/context .* · 4 requests ·[\s\S]* out · \$0\.\d{4}/, 'the usage line')
  // Only the live region redrew: no stale copy of the input was left in the scrollback by the resize.
  expect(
    t
      .text()
      .split('\n')
      .filter((row) => row.startsWith('› /us')),
  ).toEqual([])

  t.type(KEYS.ctrlD)
  expect((await t.exited).exitCode).toBe(0)
  const sessions = [...storedSessions(world).values()]
  expect(sessions).toHaveLength(1)
  const events = sessions[0]!
  expect(
    events
      .filter((event) => event.type === 'user/message' && event.data.source === 'user')
      .map((event) => event.data.content[0].text),
  ).toEqual(['hello there', 'line one\nline two', 'make the file', 'take forever'])
  expect(events.filter((event) => event.type === 'plan/mode').map((event) => event.data)).toEqual([
    { active: true, actor: 'user:tui' },
    { active: false, actor: 'user:tui' },
  ])
  expect(events.filter((event) => event.type === 'turn/end').map((event) => event.data.reason)).toEqual([
    'completed',
    'completed',
    'completed',
    'aborted',
  ])
  expect(events.find((event) => event.type === 'approval/decided')?.data).toMatchObject({
    answer: 'allow_once',
    by: 'user',
  })
})
