import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { homedir, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, expect, test } from 'vitest'
import type { MockReply, RecordedRequest } from '@dsh/llm-mock-server'
import { run } from './launcher.ts'
import type { RalphRecord } from './ralph.ts'
import { useMockDeepSeek } from './test-support/mock-deepseek.ts'

const appDir = join(dirname(fileURLToPath(import.meta.url)), '..')

// The iterations' dsh processes inherit the environment: the mock provider stands in for DeepSeek.
const mock = useMockDeepSeek()
let workspace: string
beforeEach(() => {
  workspace = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-ralph-ws-')))
})
afterEach(() => rmSync(workspace, { recursive: true, force: true }))

async function launch(argv: string[]) {
  let stdout = ''
  let stderr = ''
  const sink = (add: (text: string) => void) =>
    ({ write: (chunk: string | Uint8Array) => (add(String(chunk)), true) }) as unknown as NodeJS.WritableStream
  const code = await run(argv, {
    stdout: sink((text) => (stdout += text)),
    stderr: sink((text) => (stderr += text)),
    cwd: workspace,
    appDir,
    ownsProcess: false,
  })
  return { code, stdout, stderr }
}

/** The one record a run wrote under $DSH_HOME/ralph. */
function record(dshHome = mock.home.dir): RalphRecord {
  const files = readdirSync(join(dshHome, 'ralph')).filter((name) => name.endsWith('.json'))
  expect(files).toHaveLength(1)
  return JSON.parse(readFileSync(join(dshHome, 'ralph', files[0]!), 'utf8')) as RalphRecord
}

/** Session ids stored under $DSH_HOME (`sessions/<workspace key>/<id>/session.jsonl`), with their logs. */
function storedSessions(): Map<string, string> {
  const dir = join(mock.home.dir, 'sessions')
  const found = new Map<string, string>()
  for (const key of existsSync(dir) ? readdirSync(dir) : [])
    for (const id of readdirSync(join(dir, key))) {
      const log = join(dir, key, id, 'session.jsonl')
      if (existsSync(log)) found.set(id, readFileSync(log, 'utf8'))
    }
  return found
}

/** Pids of living processes whose command line holds `needle`. */
function running(needle: string): string[] {
  return readdirSync('/proc').filter((pid) => {
    try {
      return /^\d+$/.test(pid) && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(needle)
    } catch {
      return false // it ended while we looked
    }
  })
}

/** The request that asks for a session's generated title (session-admin), not part of the agent's turn. */
const asksTitle = (request: RecordedRequest) => JSON.stringify(request.body).includes('You name chat sessions')

/** The agent's first request of each session, in order (each iteration's prompt). */
const firstRequests = () =>
  mock.llm.requests.filter((request) => !asksTitle(request) && toolResults(request) === 0).map(userText)

const toolResults = (request: RecordedRequest) =>
  (request.body as { messages: { role: string }[] }).messages.filter((message) => message.role === 'tool').length

/** The text of the request's user messages, joined. */
const userText = (request: RecordedRequest) =>
  (request.body as { messages: { role: string; content: unknown }[] }).messages
    .filter((message) => message.role === 'user')
    .map((message) => (typeof message.content === 'string' ? message.content : JSON.stringify(message.content)))
    .join('\n')

/**
 * A model that makes one `bash` call per session (`command`, or what `commandFor` picks for that session's
 * request), then answers "done"; every reply reports `usage`.
 */
function scriptModel(
  command: string | ((request: RecordedRequest) => string),
  usage = { input: 100, output: 10 },
): void {
  mock.llm.respondWith((request): MockReply => {
    if (asksTitle(request)) return { text: 'A title', usage }
    if (toolResults(request) === 0) {
      const text = typeof command === 'string' ? command : command(request)
      return { toolCalls: [{ name: 'bash', arguments: { command: text } }], usage }
    }
    return { text: 'done', usage }
  })
}

test('the loop stops when its check passes on iteration 3, each iteration a stored session linked to the run', async () => {
  scriptModel('echo tick >> count.txt')
  const { code, stdout, stderr } = await launch([
    'ralph',
    'count to three',
    '--until',
    'test "$(wc -l < count.txt)" -ge 3',
    '--approve',
    '--json',
  ])
  expect({ code, stderr }).toMatchObject({ code: 0 })
  const rec = record()
  expect(rec.stopReason).toBe('passed')
  expect(rec.iterations.map((iteration) => iteration.check?.exitCode)).toEqual([1, 1, 0])
  expect(readFileSync(join(workspace, 'count.txt'), 'utf8')).toBe('tick\ntick\ntick\n')
  const ids = rec.iterations.map((iteration) => iteration.sessionId)
  expect(new Set(ids).size).toBe(3)
  const stored = storedSessions()
  expect([...stored.keys()].sort()).toEqual([...ids].sort())
  expect(rec.confinement).toMatchObject({ confined: true, backend: 'bubblewrap', network: 'none' })
  // Each session carries the run id in its title.
  for (const [index, id] of ids.entries()) {
    expect(stored.get(id!)).toContain(`"title":"ralph ${rec.runId} #${index + 1}: count to three"`)
  }
  // From iteration 2 on, the prompt says where the loop is and how the check failed.
  const firsts = firstRequests()
  expect(firsts).toHaveLength(3)
  expect(firsts[0]).not.toContain('dsh ralph')
  expect(firsts[1]).toContain('iteration 2 of at most 10')
  expect(firsts[1]).toContain('exited 1')
  expect(firsts[2]).toContain('iteration 3 of at most 10')
  const line = JSON.parse(stdout.trim().split('\n').at(-1)!)
  expect(line).toMatchObject({ type: 'result', stopReason: 'passed', exitCode: 0, iterations: 3, sessions: ids })
  expect(line.tokens).toBe(rec.tokens)
  // Per iteration: the bash call, the answer and the generated title, 110 tokens each.
  expect(rec.iterations.map((iteration) => iteration.tokens)).toEqual([330, 330, 330])
  expect(rec.tokens).toBe(990)
}, 120_000)

test('the loop stops at --max-iterations when the check never passes, and exits 1', async () => {
  scriptModel('echo tick >> count.txt')
  const { code, stdout } = await launch([
    'ralph',
    'never enough',
    '--until',
    'echo "only $(wc -l < count.txt) lines"; exit 4',
    '--max-iterations',
    '2',
    '--approve',
  ])
  expect(code).toBe(1)
  const rec = record()
  expect(rec.stopReason).toBe('max-iterations')
  expect(rec.iterations).toHaveLength(2)
  expect(rec.iterations.map((iteration) => iteration.check?.exitCode)).toEqual([4, 4])
  expect(rec.iterations[1]!.check!.outputTail).toBe('only 2 lines\n')
  expect(rec.endedAt).not.toBeNull()
  expect(storedSessions().size).toBe(2)
  expect(stdout).toContain('stopped at --max-iterations 2')
  // The second prompt carried the first check's output.
  const second = firstRequests()[1]!
  expect(second).toContain('exited 4')
  expect(second).toContain('only 1 lines')
}, 120_000)

test("the note to the next iteration carries only the capped tail of the check's output", async () => {
  scriptModel('true')
  const { code } = await launch([
    'ralph',
    'be brief',
    '--until',
    "head -c 20000 /dev/zero | tr '\\0' x; echo; echo THE-END; exit 1",
    '--max-iterations',
    '2',
    '--approve',
  ])
  expect(code).toBe(1)
  const tail = record().iterations[0]!.check!.outputTail
  expect(tail.length).toBe(2_000)
  expect(tail.endsWith('x\nTHE-END\n')).toBe(true)
  const second = firstRequests()[1]!
  expect(second).toContain('THE-END')
  expect(second).not.toContain('x'.repeat(2_001))
  expect(second).toContain('x'.repeat(1_900))
}, 120_000)

test('--budget-tokens stops the loop once the usage of its iterations reaches the budget', async () => {
  // Three requests (the call, the answer, the title) of 1,100 tokens per iteration: 3,300 after the first.
  scriptModel('true', { input: 1_000, output: 100 })
  const { code, stdout } = await launch([
    'ralph',
    'spend',
    '--until',
    'false',
    '--budget-tokens',
    '6000',
    '--approve',
    '--json',
  ])
  expect(code).toBe(1)
  const rec = record()
  expect(rec.stopReason).toBe('budget')
  expect(rec.iterations.map((iteration) => iteration.tokens)).toEqual([3_300, 3_300])
  expect(rec.tokens).toBe(6_600)
  expect(JSON.parse(stdout.trim())).toMatchObject({ stopReason: 'budget', iterations: 2, tokens: 6_600 })
}, 120_000)

test('--budget-usd stops the loop once the priced cost of its iterations reaches the amount', async () => {
  scriptModel('true', { input: 1_000_000, output: 0 })
  const { code, stdout } = await launch([
    'ralph',
    'spend money',
    '--until',
    'false',
    '--budget-usd',
    '0.0001',
    '--max-iterations',
    '3',
    '--approve',
    '--json',
  ])
  expect(code).toBe(1)
  const rec = record()
  expect(rec.stopReason).toBe('budget')
  expect(rec.iterations).toHaveLength(1)
  expect(rec.iterations[0]!.cost).toBeGreaterThan(0.0001)
  expect(rec.cost).toBe(rec.iterations[0]!.cost)
  expect(JSON.parse(stdout.trim())).toMatchObject({ stopReason: 'budget', iterations: 1, cost: rec.cost })
}, 120_000)

test('a hostile check the model wrote cannot write outside the workspace, reach loopback, read an env secret or the run record', async () => {
  // Real folders outside /tmp (a confined command has a private /tmp, where a refusal would prove nothing).
  const parent = existsSync('/var/tmp') ? '/var/tmp' : homedir()
  const outside = realpathSync(mkdtempSync(join(parent, 'dsh-ralph-out-')))
  // A DSH_HOME there too: the run record and the sessions are a secret path to every confined command.
  const dshHome = realpathSync(mkdtempSync(join(parent, 'dsh-ralph-home-')))
  process.env.DSH_HOME = dshHome
  const homeFile = join(homedir(), `.dsh-ralph-pwned-${process.pid}`)
  const secret = `ralph-secret-${Date.now()}-0123456789`
  process.env.RALPH_TEST_SECRET_TOKEN = secret
  let connections = 0
  const server: Server = createServer((socket) => (connections++, socket.destroy()))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  try {
    const script = [
      `echo pwned > ${outside}/x && echo "wrote-outside"`,
      `echo pwned > ${homeFile} && echo "wrote-home"`,
      `bash -c 'echo hi > /dev/tcp/127.0.0.1/${port}' 2>/dev/null && echo "bash-connected"`,
      `node -e 'const s=require("net").connect(${port},"127.0.0.1",()=>{console.log("node-connected");s.end()});s.on("error",()=>{})'`,
      'echo "secret=[$RALPH_TEST_SECRET_TOKEN]"',
      "echo \"proc-hits=$(cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c '^RALPH_TEST_SECRET_TOKEN=')\"",
      `echo "record-bytes=$(cat ${dshHome}/ralph/*.json 2>/dev/null | wc -c)"`,
      `echo '{}' > ${dshHome}/ralph/planted.json && echo "wrote-record"`,
      'exit 1',
    ].join('\n')
    // Iteration 1's model writes the check script into the workspace; iteration 2's does nothing more.
    mock.llm.respondWith((request): MockReply => {
      if (!asksTitle(request) && toolResults(request) === 0 && !userText(request).includes('dsh ralph'))
        return { toolCalls: [{ name: 'write', arguments: { path: 'check.sh', content: `${script}\n` } }] }
      return { text: 'done' }
    })
    const { code, stdout, stderr } = await launch([
      'ralph',
      'make the check pass',
      '--until',
      'sh check.sh',
      '--max-iterations',
      '2',
      '--approve',
      '--json',
    ])
    expect(code).toBe(1)
    const rec = record(dshHome)
    expect(rec.iterations).toHaveLength(2)
    const output = rec.iterations[0]!.check!.outputTail
    // The script ran (its last lines printed) and every attempt failed.
    expect(output).toContain('secret=[]')
    expect(output).toContain('proc-hits=0')
    expect(output).toContain('record-bytes=0')
    for (const word of ['wrote-outside', 'wrote-home', 'bash-connected', 'node-connected', 'wrote-record'])
      expect(output).not.toContain(word)
    expect(existsSync(join(outside, 'x'))).toBe(false)
    expect(existsSync(homeFile)).toBe(false)
    expect(readdirSync(join(dshHome, 'ralph'))).toEqual([`${rec.runId}.json`])
    expect(connections).toBe(0)
    const everything = [
      stdout,
      stderr,
      JSON.stringify(rec),
      ...mock.llm.requests.map((request) => JSON.stringify(request.body)),
    ]
    for (const text of everything) expect(text).not.toContain(secret)
  } finally {
    server.close()
    rmSync(outside, { recursive: true, force: true })
    rmSync(dshHome, { recursive: true, force: true })
    rmSync(homeFile, { force: true })
  }
}, 120_000)

test('a check that runs past --check-timeout is killed with its process group and counts as failed, noted as timed out', async () => {
  scriptModel('true')
  const marker = `${70 + (process.pid % 20)}.${Date.now() % 1000}`
  const started = Date.now()
  const { code } = await launch([
    'ralph',
    'wait',
    '--until',
    `sleep ${marker} & sleep ${marker}; true`,
    '--check-timeout',
    '1',
    '--max-iterations',
    '2',
    '--approve',
  ])
  expect(code).toBe(1)
  const rec = record()
  expect(rec.stopReason).toBe('max-iterations')
  expect(rec.iterations.map((iteration) => iteration.check?.timedOut)).toEqual([true, true])
  expect(rec.iterations[0]!.check!.exitCode).not.toBe(0)
  expect(Date.now() - started).toBeLessThan(60_000) // one sleep left to run would take 70 s or more
  // Neither sleep survived: the whole group was killed, the backgrounded one too.
  expect(running(marker)).toEqual([])
  const second = firstRequests()[1]!
  expect(second).toContain('timed out after 1 s and was killed')
}, 120_000)

test('SIGINT during a check kills the check, records "interrupted" and exits 130', async () => {
  scriptModel('true')
  const marker = `${50 + (process.pid % 40)}.${Date.now() % 1000}`
  const child = spawn(
    process.execPath,
    [join(appDir, 'bin', 'dsh.js'), 'ralph', 'wait', '--until', `sleep ${marker}`, '--approve', '--quiet'],
    { cwd: workspace, env: process.env, stdio: 'ignore' },
  )
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
  // The check is running once its `sleep` is (ralph's own command line holds the marker too).
  const checking = () =>
    readdirSync('/proc').some((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8') === `sleep\0${marker}\0`
      } catch {
        return false
      }
    })
  for (const deadline = Date.now() + 30_000; !checking() && Date.now() < deadline;)
    await new Promise((resolve) => setTimeout(resolve, 50))
  expect(checking()).toBe(true)
  child.kill('SIGINT')
  expect(await exited).toBe(130)
  const rec = record()
  expect(rec.stopReason).toBe('interrupted')
  expect(rec.iterations).toHaveLength(1)
  expect(rec.iterations[0]!.sessionId).toMatch(/./)
  expect(running(marker)).toEqual([])
}, 60_000)

test("an iteration that fails before it opens a session stops the loop with its usage error's exit code", async () => {
  scriptModel('true')
  const { code, stderr } = await launch(['ralph', 'do it', '--until', 'false', '--preset', 'no-such-preset'])
  expect(code).toBe(2)
  expect(stderr).toContain('no-such-preset')
  const rec = record()
  expect(rec.stopReason).toBe('run-failed')
  expect(rec.iterations).toEqual([expect.objectContaining({ n: 1, sessionId: null, runExitCode: 2 })])
  expect(rec.iterations[0]!.check).toBeUndefined()
  expect(mock.llm.requests).toHaveLength(0)
}, 60_000)

test.each([
  [['ralph', 'do it'], '--until'],
  [['ralph', 'do it', '--until', 'true', '--max-iterations', '0'], '--max-iterations'],
  [['ralph', 'do it', '--until', 'true', '--max-iterations', 'three'], '--max-iterations'],
  [['ralph', 'do it', '--until', 'true', '--budget-tokens', '-5'], '--budget-tokens'],
  [['ralph', 'do it', '--until', 'true', '--check-timeout', 'soon'], '--check-timeout'],
  [['ralph', 'do it', '--until', 'true', '--budget-usd', '$5'], '--budget-usd'],
  [['ralph', 'do it', '--until', 'true', '--max-steps', '1.5'], '--max-steps'],
  [['ralph', 'do it', '--until'], '--until'],
  [['ralph', 'do it', '--until', 'true', '--bogus'], '--bogus'],
])('%j is a usage error (exit 2) naming %s, and nothing runs', async (argv, flag) => {
  const { code, stdout, stderr } = await launch(argv)
  expect(code).toBe(2)
  expect(stderr).toMatch(/^dsh: dsh ralph: /)
  expect(stderr).toContain(flag)
  expect(stdout).toBe('')
  expect(mock.llm.requests).toHaveLength(0)
  expect(existsSync(join(mock.home.dir, 'ralph'))).toBe(false)
})

test.each([
  [['--max-iterations', 'x'], '--max-iterations'],
  [['--patch', 'no-such-patch-here'], 'no-such-patch-here'],
])('with --json a usage error (%j) still ends with one result line', async (extra, named) => {
  const { code, stdout, stderr } = await launch(['ralph', 'do it', '--json', '--until', 'true', ...extra])
  expect(code).toBe(2)
  expect(stderr).toContain(named)
  expect(stdout.trim().split('\n')).toHaveLength(1)
  expect(JSON.parse(stdout)).toMatchObject({
    type: 'result',
    stopReason: 'usage',
    exitCode: 2,
    iterations: 0,
    message: expect.stringContaining(named),
  })
  expect(mock.llm.requests).toHaveLength(0)
})

test('dsh ralph --help describes the loop, its flags and exit codes', async () => {
  const { code, stdout } = await launch(['ralph', '--help'])
  expect(code).toBe(0)
  expect(stdout).toMatch(/^dsh ralph — /)
  for (const flag of [
    '--until',
    '--max-iterations',
    '--budget-tokens',
    '--check-timeout',
    '--unconfined-check',
    '--json',
  ])
    expect(stdout).toContain(flag)
  expect(stdout).toContain('$DSH_HOME/ralph/<run-id>.json')
})

test('without a working sandbox backend the loop refuses to start, naming bubblewrap, and exits 3', async () => {
  scriptModel('true')
  process.env.PATH = join(workspace, 'no-tools-here') // bwrap is looked up on PATH when the sandbox is probed
  const { code, stdout, stderr } = await launch(['ralph', 'do it', '--until', 'true', '--json'])
  expect(code).toBe(3)
  expect(stderr).toContain('bubblewrap')
  expect(stderr).toContain('--unconfined-check')
  expect(JSON.parse(stdout.trim())).toMatchObject({ type: 'result', stopReason: 'unconfinable', iterations: 0 })
  expect(mock.llm.requests).toHaveLength(0)
  expect(storedSessions().size).toBe(0)
})
