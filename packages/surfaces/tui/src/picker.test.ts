// `dsh resume` with no id on a terminal: the picker opens a stored session, whose transcript is drawn from its
// log; `/` completes a user command; what the stored log holds is shown as text only; NO_COLOR is honoured.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { dshInProcess } from '@dsh/test-harness'
import { KEYS } from '@dsh/terminal-driver'
import { makeWorld, storedSessions, type World } from './test-support/world.ts'

let world: World
beforeAll(async () => {
  world = await makeWorld()
})
afterAll(async () => {
  await world?.dispose()
})

test('the resume picker opens a stored session; / lists and runs a user command; @ completes a path; hostile text stays text; NO_COLOR has no colours; Ctrl+C twice exits 0', async () => {
  // A stored session whose answer tries to clear the screen, retitle the window and write the clipboard.
  world.llm.enqueue({ text: 'Stored answer\x1b[2J\x1b]0;pwned\x07\x1b]52;c;ZXZpbA==\x07 is here.' })
  const stored = await dshInProcess([...world.patchArgs, 'what is stored?'], { env: world.env, cwd: world.repo })
  expect(stored.code).toBe(0)
  const [id] = [...storedSessions(world).keys()]
  mkdirSync(join(world.repo, 'src'), { recursive: true })
  writeFileSync(join(world.repo, 'src/main.ts'), 'export {}\n')
  mkdirSync(join(world.repo, '.dsh/commands'), { recursive: true })
  writeFileSync(
    join(world.repo, '.dsh/commands/deploy-notes.md'),
    '---\ndescription: Write the deploy notes\n---\nWrite deploy notes for $ARGUMENTS.\n',
  )

  // A generous Ctrl+C window: the second press must not miss it on a loaded machine.
  const t = world.open(['resume'], { env: { NO_COLOR: '1' }, tuiConfig: '{ exitWindowMs: 60000 }' })
  await t.waitFor('Resume a session', 'the picker')
  expect(t.text()).toContain('what is stored?')
  expect(t.text()).toContain(id!)
  t.type(KEYS.enter)
  await t.waitFor('Stored answer is here.', 'the stored transcript')
  await t.waitFor(id!, 'the session id in the status line')
  expect(t.title).toBe('')
  expect(t.raw).not.toContain('pwned')
  expect(t.raw).not.toContain('ZXZpbA')

  // @ completes a path of the workspace, a folder at a time.
  t.type('read @sr')
  await t.waitFor(() => t.screen().some((row) => /^› @src\/\s*$/.test(row)), 'the folder suggested')
  t.type(KEYS.tab)
  await t.waitFor(() => t.screen().some((row) => /^› @src\/main\.ts\s*$/.test(row)), 'the file in it suggested')
  t.type(KEYS.tab)
  await t.waitFor('› read @src/main.ts', 'the path completed in the input')
  t.type('\x15') // Ctrl+U: clear
  await t.waitFor(() => t.screen().some((row) => /^›\s*$/.test(row)), 'the cleared input')

  t.type('/dep')
  await t.waitFor('/deploy-notes — Write the deploy notes', 'the user command in the completion list')
  t.type(KEYS.tab)
  await t.waitFor(() => t.screen().some((row) => /^› \/deploy-notes\s*$/.test(row)), 'the completed command')
  t.type('v2')
  await t.waitFor('› /deploy-notes v2', 'the argument typed')
  world.llm.enqueue({ text: 'Notes written.' })
  t.type(KEYS.enter)
  await t.waitFor('Notes written.', 'the answer to the expanded command')
  expect(JSON.stringify(world.llm.requests.at(-1)!.body.messages)).toContain('Write deploy notes for v2.')

  // NO_COLOR: attributes (bold, inverse) but no foreground or background colour was ever written.
  // eslint-disable-next-line no-control-regex -- the escape character is what is looked for
  expect(t.raw).not.toMatch(/\x1b\[(?:3[0-7]|9[0-7]|4[0-7]|38;|48;)[0-9;]*m/)

  // Ctrl+C once arms, twice exits.
  t.type(KEYS.ctrlC)
  await t.waitFor('press Ctrl+C again to exit', 'the armed exit')
  t.type(KEYS.ctrlC)
  expect((await t.exited).exitCode).toBe(0)
  // The same session went on: the command's expansion is its second user message.
  const events = storedSessions(world).get(id!)!
  expect(events.filter((event) => event.type === 'user/message').map((event) => event.data.content[0].text)).toEqual([
    'what is stored?',
    'Write deploy notes for v2.',
  ])
})
