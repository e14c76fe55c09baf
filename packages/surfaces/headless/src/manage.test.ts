// End to end: a title made after the first run, `dsh sessions rename`, `archive` and `list --archived`, on the real launcher (in-process; the terminal prompt under a real PTY).
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { spawn } from 'node-pty'
import { dsh, dshBin, dshOk, makeWorld, storedEvents, storedSessionIds, type World } from './test-support/dsh.ts'

let world: World
beforeAll(async () => {
  world = await makeWorld()
  // Test worlds start with titles off (WITHOUT_AUTO_TITLE); the setting turns them on, as a user would.
  writeFileSync(join(world.home, 'settings.yaml'), 'sessions.autoTitle: true\n')
})
afterAll(async () => world?.dispose())

test('a one-shot run is titled before it exits; rename wins over it; archive hides it from the list until --archived', async () => {
  world.llm.enqueue({ text: 'it is the cache' }, { text: 'Flaky CI cache' })
  await dshOk(world, ['why does CI fail? [referenced: /repo/ci.log]'])
  const [id] = storedSessionIds(world)
  expect(world.llm.requests).toHaveLength(2)
  const titleBody = world.llm.requests[1]!.body
  expect(titleBody.tools ?? []).toEqual([])
  expect(JSON.stringify(titleBody.messages)).toContain('why does CI fail?')
  expect(JSON.stringify(titleBody.messages)).not.toContain('referenced')
  expect(JSON.stringify(titleBody.messages)).not.toContain('it is the cache')
  expect((await dshOk(world, ['sessions', 'list'])).stdout).toMatch(
    new RegExp(`^${id}  .* 1 turn  idle +Flaky CI cache$`, 'm'),
  )

  await dshOk(world, ['sessions', 'rename', id!, 'My own name'])
  expect(
    storedEvents(world, id!)
      .filter((event) => event.type === 'session/title')
      .map((event) => event.data),
  ).toEqual([
    { title: 'Flaky CI cache', source: 'model' },
    { title: 'My own name', source: 'user' },
  ])
  const empty = await dsh(world, ['sessions', 'rename', id!, '   '])
  expect(empty.code).toBe(2)
  expect(empty.stderr).toContain('dsh sessions rename needs the new title')

  await dshOk(world, ['sessions', 'archive', id!])
  const hidden = await dsh(world, ['sessions', 'list'])
  expect(hidden.stdout).toBe('')
  const shown = await dshOk(world, ['sessions', 'list', '--archived', '--json'])
  expect(JSON.parse(shown.stdout.trim())).toMatchObject({
    id,
    title: 'My own name',
    titleSource: 'user',
    archived: true,
  })
})

test('dsh sessions export, delete and import: the delete asks for --yes off a terminal; the imported session shows again', async () => {
  world.llm.enqueue({ text: 'short lived' }, { text: 'Short' })
  await dshOk(world, ['a session to carry'])
  const id = storedSessionIds(world).find((each) =>
    storedEvents(world, each).some((event) => JSON.stringify(event.data).includes('a session to carry')),
  )!
  const archive = join(world.repo, 'carried.tar.gz')
  await dshOk(world, ['sessions', 'export', id, '-o', 'carried.tar.gz'])
  expect(existsSync(archive)).toBe(true)

  const unasked = await dsh(world, ['sessions', 'delete', id])
  expect(unasked.code).toBe(2)
  expect(unasked.stderr).toContain('pass --yes to confirm')
  expect(storedSessionIds(world)).toContain(id)
  const done = await dshOk(world, ['sessions', 'delete', id, '--yes'])
  expect(done.stderr).toContain(`session ${id} deleted`)
  expect(storedSessionIds(world)).not.toContain(id)

  const imported = await dshOk(world, ['sessions', 'import', archive])
  expect(imported.stdout.trim()).toBe(id)
  const shown = await dshOk(world, ['sessions', 'show', id])
  expect(shown.stdout).toContain('a session to carry')
  expect(shown.stdout).toContain('short lived')
})

/** `dsh sessions delete <id>` on a real terminal: answers `answer` once the question is on the screen. */
async function deleteOnTerminal(id: string, answer: string) {
  const terminal = spawn(process.execPath, [dshBin, ...world.patchArgs, 'sessions', 'delete', id], {
    cwd: world.repo,
    env: world.env,
    cols: 200,
    rows: 40,
  })
  let screen = ''
  let answered = false
  terminal.onData((data) => {
    screen += data
    if (!answered && screen.includes('[y/N]')) {
      answered = true
      terminal.write(`${answer}\r`)
    }
  })
  const code = await new Promise<number>((resolve) => terminal.onExit(({ exitCode }) => resolve(exitCode)))
  return { code, screen: screen.replace(/\r/g, '') }
}

test('on a terminal, dsh sessions delete asks first: anything but yes keeps the session, y deletes it', async () => {
  world.llm.enqueue({ text: 'kept for now' }, { text: 'Kept' })
  await dshOk(world, ['a session to delete by hand'])
  const id = storedSessionIds(world).find((each) =>
    storedEvents(world, each).some((event) => JSON.stringify(event.data).includes('a session to delete by hand')),
  )!

  const declined = await deleteOnTerminal(id, 'no')
  expect(declined.screen).toContain(`Delete session ${id} (${world.repo}) and its subagent sessions for good? [y/N]`)
  expect(declined.screen).toContain('dsh: nothing deleted')
  expect(declined.code).toBe(1)
  expect(storedSessionIds(world)).toContain(id)

  const accepted = await deleteOnTerminal(id, 'y')
  expect(accepted.screen).toContain(`dsh: session ${id} deleted`)
  expect(accepted.code).toBe(0)
  expect(storedSessionIds(world)).not.toContain(id)
})
