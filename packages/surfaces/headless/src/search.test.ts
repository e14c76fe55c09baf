// End to end: `dsh sessions search|reindex` on sessions made by real runs of the launcher (in-process: test-support/dsh.ts) (real index).
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { dsh, dshOk, makeWorld, sessionFile, storedEvents, storedSessionIds, type World } from './test-support/dsh.ts'

let world: World
beforeEach(async () => {
  world = await makeWorld()
})
afterEach(async () => {
  await world.dispose()
})

const call = (name: string, args: Record<string, unknown>, id: string) => ({ name, arguments: args, id })

describe('dsh sessions search', () => {
  test('finds the session whose tool output has the word, at that event, marked', async () => {
    world.write('notes.txt', 'the launch code is xylophone\n')
    world.llm.enqueue(
      { toolCalls: [call('read', { path: 'notes.txt' }, 'r1')] },
      { text: 'Read it.' },
      { text: 'Unrelated.' },
    )
    await dshOk(world, ['what do the notes say?'])
    const [first] = storedSessionIds(world)
    await dshOk(world, ['something else'])
    const result = storedEvents(world, first!).find((event) => event.type === 'tool/result')!
    const { code, stdout } = await dsh(world, ['sessions', 'search', 'xylophone'])
    expect(code).toBe(0)
    const lines = stdout.trimEnd().split('\n')
    expect(lines).toHaveLength(2)
    expect(lines[0]).toMatch(
      new RegExp(`^${first}  \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d  what do the notes say\\?$`),
    )
    expect(lines[1]).toMatch(new RegExp(`^ {4}#${result.seq} tool-result: .*«xylophone»`))
    const json = (await dshOk(world, ['sessions', 'search', 'notes.txt', '--json'])).stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(json).toEqual([expect.objectContaining({ sessionId: first, source: 'tool-call', cwd: world.repo })])
  })

  test('only this workspace unless --all-workspaces; no match is said on stderr, not an error', async () => {
    mkdirSync(join(world.repo, 'elsewhere'))
    world.llm.enqueue({ text: 'gazebo here' }, { text: 'gazebo there' })
    await dshOk(world, ['one'])
    await dshOk(world, ['--cwd', 'elsewhere', 'two'])
    expect((await dshOk(world, ['sessions', 'search', 'gazebo', '--json'])).stdout.trimEnd().split('\n')).toHaveLength(
      1,
    )
    const everywhere = (await dshOk(world, ['sessions', 'search', 'gazebo', '--all-workspaces'])).stdout
    expect(everywhere).toContain(join(world.repo, 'elsewhere'))
    expect(everywhere.trimEnd().split('\n')).toHaveLength(4)
    const none = await dsh(world, ['sessions', 'search', '"unbalanced -quote* a:b'])
    expect(none).toMatchObject({ code: 0, stdout: '' })
    expect(none.stderr).toContain('no session matches')
  })

  test('a deleted session is not found; reindex rebuilds from the logs; bad usage exits 2', async () => {
    world.llm.enqueue({ text: 'walrus one' }, { text: 'walrus two' })
    await dshOk(world, ['a'])
    await dshOk(world, ['b'])
    const [gone, kept] = storedSessionIds(world)
    await dshOk(world, ['sessions', 'search', 'walrus'])
    rmSync(join(sessionFile(world, gone!)!, '..'), { recursive: true })
    const ids = (await dshOk(world, ['sessions', 'search', 'walrus', '--json'])).stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line).sessionId)
    expect(ids).toEqual([kept])
    rmSync(join(world.home, 'index'), { recursive: true })
    expect(JSON.parse((await dshOk(world, ['sessions', 'reindex', '--json'])).stdout)).toMatchObject({
      indexed: 1,
      removed: 0,
    })
    expect((await dsh(world, ['sessions', 'search'])).code).toBe(2)
    expect((await dsh(world, ['sessions', 'search', 'x', '--limit', '0'])).stderr).toContain(
      '--limit must be a whole number ≥ 1',
    )
  })
})
