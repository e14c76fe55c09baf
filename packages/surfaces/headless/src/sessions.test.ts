// End to end: `dsh sessions list/show` and `--permission`, on sessions made by real runs of the launcher (in-process: test-support/dsh.ts).
import { appendFileSync, mkdirSync } from 'node:fs'
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

describe('dsh sessions list', () => {
  test('lists the sessions of this directory, newest first, with turns, status and first prompt', async () => {
    world.llm.enqueue({ text: 'one' }, { text: 'two' }, { text: 'three' })
    await dshOk(world, ['the first session'])
    const [first] = storedSessionIds(world)
    await dshOk(world, ['resume', first!, 'more'])
    await dshOk(world, ['the second session'])
    const second = storedSessionIds(world).find((id) => id !== first)!
    const { code, stdout } = await dsh(world, ['sessions', 'list'])
    expect(code).toBe(0)
    const rows = stdout.trimEnd().split('\n')
    expect(rows).toHaveLength(2)
    expect(rows[0]).toMatch(
      new RegExp(`^${second}  \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d +1 turn  idle +the second session$`),
    )
    expect(rows[1]).toMatch(new RegExp(`^${first}  .* 2 turns  idle +the first session$`))
  })

  test('--cwd chooses the directory and --json prints one summary per line', async () => {
    const elsewhere = join(world.repo, 'elsewhere')
    mkdirSync(elsewhere)
    world.llm.enqueue({ text: 'here' }, { text: 'there' })
    await dshOk(world, ['made here'])
    await dshOk(world, ['--cwd', 'elsewhere', 'made elsewhere'])
    const { stdout } = await dsh(world, ['sessions', 'list', '--cwd', elsewhere, '--json'])
    const summaries = stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(summaries).toHaveLength(1)
    expect(summaries[0]).toMatchObject({
      cwd: elsewhere,
      turns: 1,
      status: 'idle',
      firstPrompt: 'made elsewhere',
      live: false,
    })
  })
})

describe('dsh sessions list with a damaged log', () => {
  test('a session whose stored log fails validation is listed as damaged, with file, line and field on stderr', async () => {
    world.llm.enqueue({ text: 'one' })
    await dshOk(world, ['a session that will be damaged'])
    const [id] = storedSessionIds(world)
    const file = sessionFile(world, id!)!
    const seq = storedEvents(world, id!).length
    appendFileSync(
      file,
      JSON.stringify({ type: 'tool/result', seq, time: 1, data: { callId: 'c', content: 'not blocks' } }) + '\n',
    )
    const { code, stdout, stderr } = await dsh(world, ['sessions', 'list'])
    expect(code).toBe(0)
    expect(stdout).toMatch(new RegExp(`^${id}  .* 1 turn  damaged +a session that will be damaged$`, 'm'))
    expect(stderr).toContain(
      `dsh: session ${id} is damaged and cannot be resumed: ${file}:${seq + 2}: session ${id}: event ${seq} (seq ${seq}, tool/result): data.content must be an array`,
    )
  })
})

describe('dsh sessions show', () => {
  test('prints the transcript with event numbers', async () => {
    world.write('a.txt', 'alpha\n')
    world.llm.enqueue({ toolCalls: [call('read', { path: 'a.txt' }, 'r1')] }, { text: 'It says alpha.' })
    await dshOk(world, ['what is in a.txt?'])
    const [id] = storedSessionIds(world)
    const { code, stdout } = await dsh(world, ['sessions', 'show', id!])
    expect(code).toBe(0)
    const end = storedEvents(world, id!).at(-1)!.seq
    expect(stdout).toContain(`session ${id}\ncwd     ${world.repo}\n`)
    expect(stdout).toMatch(/#\d+ {2}user {7}what is in a\.txt\?\n/)
    expect(stdout).toMatch(/#\d+ {2}tool {7}read a\.txt\n/)
    expect(stdout).toMatch(/#\d+ {2}result {5}.*alpha/)
    expect(stdout).toMatch(/#\d+ {2}assistant {2}It says alpha\.\n/)
    expect(stdout).toContain(`#${end}  turn end   completed\n`)
  })

  test('--audit lists the preset chosen (by the --permission flag) and every approval asked and refused', async () => {
    world.llm.enqueue(
      {
        toolCalls: [
          call('bash', { command: 'touch outside-the-sandbox', sandbox: false, justification: 'needs it' }, 'b1'),
        ],
      },
      { text: 'Refused, so I stopped.' },
    )
    expect((await dsh(world, ['--permission', 'read-only', 'try it'])).code).toBe(1) // the refusal fails the run
    const [id] = storedSessionIds(world)
    const { code, stdout } = await dsh(world, ['sessions', 'show', id!, '--audit'])
    expect(code).toBe(0)
    expect(stdout).toMatch(/#\d+ +\S+ +preset read-only chosen by user:cli-flag \(sandbox read-only, approval ask\)/)
    expect(stdout).toMatch(/#\d+ +\S+ +sandbox mode set to read-only by user:cli-flag/)
    expect(stdout).toMatch(
      /#\d+ +\S+ +approval asked for bash \(.*touch outside-the-sandbox.*\).* \[offers rule unconfined\(touch outside-the-sandbox \*\)\]/,
    )
    expect(stdout).toMatch(/#\d+ +\S+ +approval REJECTED by no-answerer for bash/)
    const audited = (await dshOk(world, ['sessions', 'show', id!, '--audit', '--json'])).stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(audited.map((line) => line.type)).toEqual(
      expect.arrayContaining(['permission/preset', 'approval/asked', 'approval/decided']),
    )
    expect(audited.every((line) => line.sessionId === id)).toBe(true)
  })

  test('an unknown session id is bad usage naming it', async () => {
    const { code, stderr } = await dsh(world, ['sessions', 'show', 'nope'])
    expect(code).toBe(2)
    expect(stderr).toMatch(/^dsh: session nope not found under .*\n$/)
  })
})

describe('--permission', () => {
  test('read-only makes the sandbox refuse an edit in the repository', async () => {
    world.write('keep.txt', 'original\n')
    world.llm.enqueue(
      { toolCalls: [call('read', { path: 'keep.txt' }, 'r1')] },
      { toolCalls: [call('edit', { path: 'keep.txt', old_string: 'original', new_string: 'changed' }, 'e1')] },
      { text: 'The edit was refused.' },
    )
    const { code } = await dsh(world, ['--permission', 'read-only', 'change keep.txt'])
    expect(code).toBe(0)
    expect(world.read('keep.txt')).toBe('original\n')
    const [id] = storedSessionIds(world)
    expect(
      storedEvents(world, id!).find((event) => event.type === 'tool/result' && event.data.callId === 'e1')!.data.error
        .code,
    ).toBe('FS_SANDBOX_DENIED')
  })

  test('an unknown preset is bad usage listing the known ones', async () => {
    const { code, stderr } = await dsh(world, ['--permission', 'yolo', 'task'])
    expect(code).toBe(2)
    expect(stderr).toBe(
      'dsh: --permission: unknown permission preset "yolo" (known: read-only, workspace-write, danger-full-access)\n',
    )
  })
})
