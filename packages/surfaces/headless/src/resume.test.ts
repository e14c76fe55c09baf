// End to end, like run.test.ts: a run cut by SIGINT or SIGKILL, then resumed; resume and fork of stored
// sessions.
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { processesWith } from '@dsh/test-harness/world'
import {
  conversation,
  dsh,
  dshOk,
  launchDsh,
  makeWorld,
  storedEvents,
  storedSessionIds,
  waitFor,
  type World,
} from './test-support/dsh.ts'

let world: World
beforeEach(async () => {
  world = await makeWorld()
})
afterEach(async () => {
  await world.dispose()
})

const onlySession = () => {
  const ids = storedSessionIds(world)
  expect(ids).toHaveLength(1)
  return ids[0]!
}

describe('signals and crashes', () => {
  /** Starts a run whose model stalls mid-answer and waits until part of the answer is in the log. */
  async function stalledRun() {
    world.llm.enqueue({ text: 'Partial answer that never ends', stallAfterChunks: 3 })
    const run = launchDsh(world, ['a long task'])
    await world.llm.waitForRequests(1, 40_000)
    await waitFor(
      () =>
        storedSessionIds(world).length === 1 &&
        storedEvents(world, storedSessionIds(world)[0]!).some((event) => event.type === 'assistant/chunk'),
      'the first chunk in the log',
    )
    return { run, id: storedSessionIds(world)[0]! }
  }

  test('SIGINT mid-turn cancels the turn, flushes the log and exits 130', async () => {
    const { run, id } = await stalledRun()
    run.child.kill('SIGINT')
    expect(await run.exited).toBe(130)
    const events = storedEvents(world, id)
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'aborted' } })
    expect(events.findLast((event) => event.type === 'assistant/message')!.data).toMatchObject({
      finish: 'aborted',
      interrupted: true,
    })
    expect(run.stderr()).toContain(`dsh: interrupted by SIGINT: the turn was cancelled; session ${id} is saved`)
  })

  test('resume after a SIGKILL continues the same session', async () => {
    const { run, id } = await stalledRun()
    run.child.kill('SIGKILL')
    await run.exited
    world.llm.enqueue({ text: 'Continuing where we were.' })
    const { code, stdout } = await dsh(world, ['resume', id, 'please go on'])
    expect({ code, stdout }).toEqual({ code: 0, stdout: 'Continuing where we were.\n' })
    expect(storedSessionIds(world)).toEqual([id])
    const ends = storedEvents(world, id)
      .filter((event) => event.type === 'turn/end')
      .map((event) => event.data.reason)
    expect(ends).toEqual(['interrupted', 'completed'])
    // The partial answer is in the log (the turn ended interrupted) but not in what the model is sent (issue #18).
    expect(conversation(world.llm.requests[1]!.body)).toEqual(['user: a long task', 'user: please go on'])
  })
})

describe('resume and fork', () => {
  test('--resume <id> and `dsh resume <id>` continue one session', async () => {
    world.llm.enqueue({ text: 'one' }, { text: 'two' }, { text: 'three' })
    await dshOk(world, ['first'])
    const id = onlySession()
    expect((await dshOk(world, ['--resume', id, 'second'])).stdout).toBe('two\n')
    expect((await dshOk(world, ['resume', id, 'third'])).stdout).toBe('three\n')
    expect(storedSessionIds(world)).toEqual([id])
    expect(conversation(world.llm.requests[2]!.body)).toEqual([
      'user: first',
      'assistant: one',
      'user: second',
      'assistant: two',
      'user: third',
    ])
  })

  test('fork at the end of the first turn starts a new session that has only that turn', async () => {
    world.llm.enqueue({ text: 'A' }, { text: 'B' }, { text: 'C' })
    await dshOk(world, ['first'])
    const id = onlySession()
    await dshOk(world, ['resume', id, 'second'])
    const firstEnd = storedEvents(world, id).find((event) => event.type === 'turn/end')!.seq
    const { code, stdout } = await dsh(world, ['fork', id, '--at', String(firstEnd), 'instead'])
    expect({ code, stdout }).toEqual({ code: 0, stdout: 'C\n' })
    const forked = storedSessionIds(world).find((other) => other !== id)!
    expect(storedEvents(world, forked).slice(0, firstEnd + 1)).toEqual(storedEvents(world, id).slice(0, firstEnd + 1))
    expect(conversation(world.llm.requests[2]!.body)).toEqual(['user: first', 'assistant: A', 'user: instead'])
  })

  test('a fork inside a turn is bad usage naming where the turn ends', async () => {
    world.llm.enqueue({ text: 'A' })
    await dshOk(world, ['first'])
    const id = onlySession()
    const { code, stderr } = await dsh(world, ['--fork', id, '--at', '2', 'x'])
    expect(code).toBe(2)
    expect(stderr).toMatch(
      /^dsh: cannot fork \S+ at seq 2: a turn is open there \(it ends at seq \d+\); fork at a turn boundary\n$/,
    )
  })
})

describe('a crash mid-command', () => {
  test('kill -9 while a command prints: the lines it printed are in the log, and `sessions show` shows them', async () => {
    const marker = `live-output-${process.pid}-${Date.now()}`
    const command = `echo first line; sleep 0.6; echo second line; sleep 2 # ${marker}`
    world.llm.enqueue({ toolCalls: [{ id: 'b', name: 'bash', arguments: { command } }] })
    const run = launchDsh(world, ['run the build'])
    const printed = () => {
      const [id] = storedSessionIds(world)
      return id
        ? storedEvents(world, id)
            .flatMap((event) => (event.type === 'tool/output' ? [event.data.text as string] : []))
            .join('')
        : ''
    }
    await waitFor(() => printed().includes('second line'), 'the second line in the log', 40_000) // a loaded machine boots slowly
    run.child.kill('SIGKILL')
    await run.exited
    expect(printed()).toBe('first line\nsecond line\n')
    const { code, stdout } = await dsh(world, ['sessions', 'show', onlySession()])
    expect(code).toBe(0)
    expect(stdout).toMatch(/#\d+ {2}printed {4}first line\n/)
    expect(stdout).toMatch(/#\d+ {2}printed {4}second line\n/)
    await waitFor(() => processesWith(marker).length === 0, 'the orphaned command to end', 10_000) // before the world's folders go
  }, 90_000)
})
