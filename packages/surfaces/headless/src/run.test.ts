// End to end: the real launcher (in-process: test-support/dsh.ts; the two tests of what reaches the real stdout and stderr spawn the bundled `dsh`) in a temp home and repository, its model a
// local server speaking DeepSeek's wire format. Only the model is fake.
import { existsSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import {
  conversation,
  dsh,
  dshProcess,
  makeWorld,
  storedEvents,
  storedSessionIds,
  type World,
} from './test-support/dsh.ts'

let world: World
beforeEach(async () => {
  world = await makeWorld()
})
afterEach(async () => {
  await world.dispose()
})

const call = (name: string, args: Record<string, unknown>, id: string) => ({ name, arguments: args, id })
const onlySession = () => {
  const ids = storedSessionIds(world)
  expect(ids).toHaveLength(1)
  return ids[0]!
}

describe('a run', () => {
  test('prints the final answer on stdout, nothing on a non-terminal stderr, and exits 0', async () => {
    world.llm.enqueue({
      reasoning: 'A greeting is asked for.',
      text: 'Hello from the model.',
      usage: { input: 20, output: 6 },
    })
    const { code, stdout, stderr } = await dshProcess(world, ['say hello'])
    expect({ code, stdout, stderr }).toEqual({ code: 0, stdout: 'Hello from the model.\n', stderr: '' })
    expect(conversation(world.llm.requests[0]!.body)).toEqual(['user: say hello'])
    // The runtime context came before the task, in the same request.
    expect(
      world.llm.requests[0]!.body.messages.filter((message: { role: string }) => message.role === 'user').map(
        (message: { content: string }) => message.content.split('\n')[0],
      ),
    ).toEqual([expect.stringMatching(/^Runtime context \(/), 'say hello'])
    expect(storedEvents(world, onlySession()).at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'completed' } })
  })

  test('edits a file in the repository through tool calls', async () => {
    world.write('notes/greeting.txt', 'helo wrold\n')
    world.llm.enqueue(
      { toolCalls: [call('read', { path: 'notes/greeting.txt' }, 'r1')] },
      {
        toolCalls: [
          call('edit', { path: 'notes/greeting.txt', old_string: 'helo wrold', new_string: 'hello world' }, 'e1'),
        ],
      },
      { text: 'Fixed the typos.' },
    )
    const { code, stdout } = await dsh(world, ['fix the typos in notes/greeting.txt'])
    expect(code).toBe(0)
    expect(stdout).toBe('Fixed the typos.\n')
    expect(world.read('notes/greeting.txt')).toBe('hello world\n')
    // The model saw the file as it was before the edit.
    expect(JSON.stringify(world.llm.requests[1]!.body.messages.at(-1))).toContain('helo wrold')
  })

  test('takes the task from stdin when no argument gives one', async () => {
    world.llm.enqueue({ text: 'ok' })
    const { code, stdout } = await dsh(world, ['--profile', 'headless'], { stdin: 'task from stdin\n' })
    expect({ code, stdout }).toEqual({ code: 0, stdout: 'ok\n' })
    expect(conversation(world.llm.requests[0]!.body)).toEqual(['user: task from stdin'])
  })

  test('--json prints every event of the session as one line each, in the documented shape', async () => {
    world.write('ping.txt', 'pong\n')
    world.llm.enqueue(
      { reasoning: 'Look at the file.', toolCalls: [call('read', { path: 'ping.txt' }, 'r1')] },
      { text: 'It says pong.' },
    )
    const { code, stdout } = await dshProcess(world, ['--json', 'what does ping.txt say?'])
    expect(code).toBe(0)
    const lines = stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line))
    const id = onlySession()
    // The last line is the run's result (json-result.test.ts); every other line is one event.
    expect(lines.pop()).toMatchObject({ type: 'result', sessionId: id, exitCode: 0 })
    for (const [index, line] of lines.entries()) {
      expect(Object.keys(line)).toEqual(['type', 'seq', 'time', 'data', 'sessionId'])
      expect(line).toMatchObject({ seq: index, sessionId: id, time: expect.any(Number) })
    }
    expect(lines.map((line) => line.type)).toEqual(storedEvents(world, id).map((event) => event.type))
    expect(lines.find((line) => line.type === 'tool/result')!.data).toMatchObject({
      callId: 'r1',
      content: [{ type: 'text', text: expect.stringContaining('pong') }],
    })
    expect(lines.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'completed' } })
  })

  test('--json also carries what other plugins log as the session opens (the route from settings)', async () => {
    writeFileSync(join(world.home, 'settings.yaml'), 'model.provider: deepseek\nmodel.name: deepseek-v4-pro\n')
    world.llm.enqueue({ text: 'ok' })
    const { stdout } = await dsh(world, ['--json', 'hi'])
    expect(JSON.parse(stdout.split('\n')[0]!)).toMatchObject({
      type: 'model/route',
      seq: 0,
      data: { route: { provider: 'deepseek', model: 'deepseek-v4-pro' } },
    })
    expect(world.llm.requests[0]!.body.model).toBe('deepseek-v4-pro')
  })
})

describe('exit codes', () => {
  test('a model error exits 1 with one line saying why', async () => {
    world.llm.enqueue({ error: { status: 400, message: 'the request was malformed' } })
    const { code, stdout, stderr } = await dsh(world, ['anything'])
    expect(code).toBe(1)
    expect(stdout).toBe('')
    expect(stderr.trimEnd().split('\n')).toHaveLength(1)
    expect(stderr).toMatch(/^dsh: the turn ended error: .*the request was malformed.*; session \S+\n$/)
  })

  /** A model that asks to read loop.txt `steps` times, then answers. */
  const looping = (steps: number) => {
    world.write('loop.txt', 'again\n')
    world.llm.enqueue(
      ...Array.from({ length: steps }, (_, i) => ({ toolCalls: [call('read', { path: 'loop.txt' }, `c${i}`)] })),
      { text: 'Read it often enough.' },
    )
  }

  test('--max-steps lifts the per-turn limit above the agent.maxSteps default (100): 150 steps finish', async () => {
    looping(150)
    const { code, stdout, stderr } = await dsh(world, ['--max-steps', '400', 'loop'])
    expect({ code, stdout, stderr }).toEqual({ code: 0, stdout: 'Read it often enough.\n', stderr: '' })
    expect(world.llm.requests).toHaveLength(151)
    const events = storedEvents(world, onlySession())
    expect(events.filter((event) => event.type === 'step/start')).toHaveLength(151)
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'completed' } })
  })

  test('--max-steps 20 ends a looping turn after 20 model requests with the limit named, and exits 1', async () => {
    looping(150)
    const { code, stderr } = await dsh(world, ['--max-steps', '20', 'loop'])
    expect(code).toBe(1)
    expect(world.llm.requests).toHaveLength(20)
    expect(stderr).toMatch(
      /^dsh: the turn ended max-steps: the turn reached its limit of 20 steps \(MAX_STEPS\); session \S+\n$/,
    )
    expect(storedEvents(world, onlySession()).at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'max-steps' } })
  })

  /** A bash call asking to run outside the sandbox: the tool asks for approval first. */
  const unconfined = () =>
    call('bash', { command: 'echo granted > granted.txt', sandbox: false, justification: 'writes a marker file' }, 'b1')

  test('an approval nobody answers is refused, shown on stderr, and the run exits 1', async () => {
    world.llm.enqueue({ toolCalls: [unconfined()] }, { text: 'I could not run it.' })
    const { code, stdout, stderr } = await dsh(world, ['write the marker'])
    expect(code).toBe(1)
    expect(stdout).toBe('I could not run it.\n')
    expect(stderr).toMatch(
      /^dsh: refused bash: echo granted > granted\.txt .*; nobody answers approvals in a headless run: rerun with --approve to allow such calls\n/,
    )
    // The closing line sums up and names the session; it does not print the refusal a second time.
    expect(stderr.trimEnd().split('\n')).toEqual([
      expect.stringMatching(/^dsh: refused bash: /),
      `dsh: an approval was refused, so the task may be incomplete; session ${onlySession()}`,
    ])
    expect(existsSync(join(world.repo, 'granted.txt'))).toBe(false)
  })

  test('with --quiet the one line on stderr names the refused call, why, and the session', async () => {
    world.llm.enqueue({ toolCalls: [unconfined()] }, { text: 'I could not run it.' })
    const { code, stderr } = await dsh(world, ['--quiet', 'write the marker'])
    expect(code).toBe(1)
    expect(stderr).toMatch(
      new RegExp(
        `^dsh: approval refused for bash: echo granted > granted\\.txt .*; nobody answers approvals in a headless run: rerun with --approve to allow such calls; session ${onlySession()}\n$`,
      ),
    )
  })

  test('--approve answers approvals yes and the call runs', async () => {
    world.llm.enqueue({ toolCalls: [unconfined()] }, { text: 'Done.' })
    const { code, stderr } = await dsh(world, ['--approve', 'write the marker'])
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
    expect(world.read('granted.txt')).toBe('granted\n')
  })

  test('an unknown flag is bad usage: exit 2 with one line, before any request', async () => {
    const { code, stdout, stderr } = await dsh(world, ['--frobnicate', 'task'])
    expect({ code, stdout, stderr }).toEqual({ code: 2, stdout: '', stderr: "dsh: Unknown option '--frobnicate'\n" })
    expect(world.llm.requests).toHaveLength(0)
  })

  test('no task, as an argument or on stdin, is bad usage', async () => {
    const { code, stderr } = await dsh(world, ['--quiet'], { stdin: '' })
    expect(code).toBe(2)
    expect(stderr).toMatch(/^dsh: no task: /)
  })

  test('a missing key exits 1 before any request, naming DEEPSEEK_API_KEY', async () => {
    const { DEEPSEEK_API_KEY: _key, ...env } = world.env
    const { code, stderr } = await dsh(world, ['say hello'], { env })
    expect(code).toBe(1)
    expect(stderr).toContain('DEEPSEEK_API_KEY')
    expect(stderr.trimEnd().split('\n')).toHaveLength(1)
    expect(world.llm.requests).toHaveLength(0)
  })

  test('a run refused for a missing key leaves no session behind', async () => {
    const { DEEPSEEK_API_KEY: _key, ...env } = world.env
    expect((await dsh(world, ['say hello'], { env })).code).toBe(1)
    const listed = await dsh(world, ['sessions', 'list', '--json'], { env })
    expect({ code: listed.code, stdout: listed.stdout }).toEqual({ code: 0, stdout: '' })
    expect(storedSessionIds(world)).toEqual([])
    expect(
      existsSync(join(world.home, 'sessions')) ? readdirSync(join(world.home, 'sessions'), { recursive: true }) : [],
    ).toEqual([])
  })
})
