// End to end: `dsh sessions diff` and `dsh rewind` on sessions made by real runs of the launcher (in-process: test-support/dsh.ts), in a plain
// folder and in a git repository (where files changed by commands are covered too).
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { dsh, dshOk, makeWorld, storedEvents, storedSessionIds, type World } from './test-support/dsh.ts'

let world: World
beforeEach(async () => {
  world = await makeWorld()
})
afterEach(async () => {
  await world.dispose()
})

const calls = (...list: [string, string, Record<string, unknown>][]) => ({
  toolCalls: list.map(([id, name, args]) => ({ id, name, arguments: args })),
})

/** Turn 1 edits a.txt and runs a command; turn 2 (a resume) edits a.txt again and writes c.txt. */
async function twoTurns(): Promise<string> {
  world.write('a.txt', 'one\n')
  world.llm.enqueue(
    calls(
      ['r', 'read', { path: 'a.txt' }],
      ['e1', 'edit', { path: 'a.txt', old_string: 'one', new_string: 'uno' }],
      ['b', 'bash', { command: 'echo built > out.txt' }],
    ),
    { text: 'first done' },
    calls(
      ['e2', 'edit', { path: 'a.txt', old_string: 'uno', new_string: 'eins' }],
      ['w', 'write', { path: 'c.txt', content: 'new\n' }],
    ),
    { text: 'second done' },
  )
  await dshOk(world, ['first'])
  const [id] = storedSessionIds(world)
  await dshOk(world, ['resume', id!, 'second'])
  return id!
}

test('outside git, a turn whose bash changed a.txt and made c.txt is previewed, then rewound (issue #36.15)', async () => {
  world.write('a.txt', 'one\n')
  world.llm.enqueue(
    calls(['r', 'read', { path: 'a.txt' }]),
    { text: 'looked' },
    calls(['b', 'bash', { command: 'echo changed > a.txt && echo made > c.txt' }]),
    { text: 'changed' },
  )
  await dshOk(world, ['first'])
  const [id] = storedSessionIds(world)
  await dshOk(world, ['resume', id!, 'second'])
  const preview = await dshOk(world, ['rewind', id!, '--to-turn', '2', '--preview'])
  expect(preview.stdout).toBe(
    'would restore a.txt (4 bytes)\nwould remove c.txt\n' +
      `preview only: nothing was written (dsh rewind ${id} --to-turn 2 applies it)\n`,
  )
  expect(readFileSync(join(world.repo, 'a.txt'), 'utf8')).toBe('changed\n')
  expect(storedEvents(world, id!).filter((event) => event.type === 'rewind/done')).toEqual([])
  const done = await dshOk(world, ['rewind', id!, '--to-turn', '2'])
  expect(done.stdout).toBe('restored a.txt\nrestored c.txt\n')
  expect(readFileSync(join(world.repo, 'a.txt'), 'utf8')).toBe('one\n')
  expect(existsSync(join(world.repo, 'c.txt'))).toBe(false)
  expect(await dsh(world, ['rewind', id!, '--to-turn', '2', '--preview', '--fork'])).toMatchObject({ code: 2 })
})

describe.each([
  ['a plain folder', false],
  ['a git repository', true],
])('in %s', (_, repo) => {
  beforeEach(() => {
    if (!repo) return
    execFileSync('git', ['init', '-q'], { cwd: world.repo })
    world.write('.gitignore', '')
  })

  test('dsh sessions diff lists the changed files with unified diffs, since the start or since turn N', async () => {
    const id = await twoTurns()
    const all = await dshOk(world, ['sessions', 'diff', id])
    const files = ['M a.txt (+1 −1)', 'A out.txt (+1 −0)', 'A c.txt (+1 −0)'] // a command's file too, git or not
    expect(all.stdout.split('\n').slice(0, files.length + 1)).toEqual([
      `${files.length} files changed since the session started (2 turns)`,
      ...files,
    ])
    expect(all.stdout).toContain('--- a/a.txt\n+++ b/a.txt\n@@ -1,1 +1,1 @@\n-one\n+eins\n')
    expect(all.stdout).not.toContain('note:')
    const fromTwo = JSON.parse((await dshOk(world, ['sessions', 'diff', id, '--turn', '2', '--json'])).stdout)
    expect(fromTwo.files.map((file: { path: string }) => file.path)).toEqual(['a.txt', 'c.txt'])
    expect(fromTwo.files[0].patch).toContain('-uno\n+eins\n')
    const bad = await dsh(world, ['sessions', 'diff', id, '--turn', '5'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toBe(`dsh: session ${id} has turns 1..2; there is no turn 5 to compare from\n`)
  })

  test('dsh rewind --to-turn 2 restores the files byte for byte; a file changed outside dsh is reported, not overwritten, until --force', async () => {
    const id = await twoTurns()
    writeFileSync(join(world.repo, 'c.txt'), 'the user changed this\n')
    const first = await dsh(world, ['rewind', id, '--to-turn', '2'])
    expect(first.code).toBe(1)
    expect(first.stdout).toBe(
      `restored a.txt\nconflict c.txt: changed since the session last wrote it (now 22 bytes, the session left 4 bytes)\n`,
    )
    expect(first.stderr).toBe('dsh: 1 file was not restored (--force overwrites files changed since)\n')
    expect(readFileSync(join(world.repo, 'a.txt'), 'utf8')).toBe('uno\n')
    expect(readFileSync(join(world.repo, 'c.txt'), 'utf8')).toBe('the user changed this\n')
    const forced = await dsh(world, ['rewind', id, '--to-turn', '2', '--force', '--fork'])
    expect(forced.code).toBe(0)
    expect(existsSync(join(world.repo, 'c.txt'))).toBe(false)
    const forkedTo = /^forked: (\S+)/m.exec(forced.stdout)![1]!
    expect(storedEvents(world, forkedTo).filter((event) => event.type === 'turn/start')).toHaveLength(1)
    const toStart = await dshOk(world, ['rewind', id, '--to-turn', '1', '--json'])
    const done = JSON.parse(toStart.stdout)
    expect(readFileSync(join(world.repo, 'a.txt'), 'utf8')).toBe('one\n')
    expect(existsSync(join(world.repo, 'out.txt'))).toBe(false) // a command's file is rewound, git or not
    expect(done).toMatchObject({ toTurn: 1, forced: false, actor: 'user:cli-flag', conflicts: [], skipped: [] })
    expect(storedEvents(world, id).filter((event) => event.type === 'rewind/done')).toHaveLength(3)
    expect(await dsh(world, ['rewind', id, '--to-turn', '1', '--fork'])).toMatchObject({
      code: 2,
      stderr: 'dsh: turn 1 starts the log: there is no conversation before it to fork\n',
    })
  })

  test('dsh rewind refuses a turn the session does not have, and needs --to-turn', async () => {
    const id = await twoTurns()
    expect(await dsh(world, ['rewind', id, '--to-turn', '3'])).toMatchObject({
      code: 2,
      stderr: `dsh: session ${id} has turns 1..2; there is no turn 3 to rewind to\n`,
    })
    expect(await dsh(world, ['rewind', id])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('dsh rewind needs --to-turn N'),
    })
  })
})
