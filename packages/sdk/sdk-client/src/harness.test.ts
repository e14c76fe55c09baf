// The TypeScript SDK driving the real runtime (`dsh --profile sdk` from dist: build first; the SDK finds this
// checkout's launcher) with the real DeepSeek adapter against the mock model server.
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, beforeEach, expect, test } from 'vitest'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import { DshError, Harness, SessionView, type HarnessOptions } from './index.ts'

let llm: MockServer
let home: string
let workspace: string
const harnesses: Harness[] = []

beforeAll(async () => {
  llm = await startMockServer()
  home = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-sdk-home-')))
  workspace = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-sdk-ws-')))
  // No title request after a first turn: these tests count the requests the model gets.
  // A price of our own for the default model, so the cost a result carries is checked against known numbers.
  writeFileSync(
    join(home, 'settings.yaml'),
    'sessions.autoTitle: false\nusage.prices:\n  deepseek/deepseek-v4-flash: { input: 2, cachedInput: 0.5, output: 10 }\n',
  )
})
beforeEach(() => llm.reset())
afterAll(async () => {
  await Promise.all(harnesses.splice(0).map((harness) => harness.close()))
  await llm.close()
  rmSync(home, { recursive: true, force: true })
  rmSync(workspace, { recursive: true, force: true })
})

async function start(options: HarnessOptions = {}) {
  const harness = await Harness.start({
    cwd: workspace,
    ...options,
    env: { DSH_HOME: home, DEEPSEEK_BASE_URL: llm.url, DEEPSEEK_API_KEY: 'test', ...options.env },
  })
  harnesses.push(harness)
  return harness
}

/** The test-harness's fixture tools (write_file asks for approval under protected/), as a patch file. */
function fixtureToolsPatch(): string {
  const built = createRequire(import.meta.url)
    .resolve('@dsh/test-harness/fixture-tools')
    .replace(/\/src\/(.*)\.ts$/, '/dist/$1.js')
  const file = join(home, 'fixture-tools.patch.yml')
  writeFileSync(file, `- insert: [{ id: fixture-tools, name: ${JSON.stringify(built)} }]\n`)
  return file
}

/** One runtime of the default sdk composition (plus the fixture tools), shared by the tests that need nothing else. */
let shared: Promise<Harness> | undefined
const sharedHarness = () => (shared ??= start({ patches: [fixtureToolsPatch()] }))

test('a text run resolves to the final text, the events and the finish reason', async () => {
  llm.enqueue({ text: 'Hello from the mock model.' })
  const harness = await sharedHarness()
  expect(harness.info.providers.map((provider) => provider.provider)).toContain('deepseek')
  const session = await harness.session()
  const result = await session.run('say hello')
  expect(result).toMatchObject({
    sessionId: session.id,
    text: 'Hello from the mock model.',
    reason: 'completed',
    messageId: expect.any(String),
  })
  expect(result.events[0]!.type).toBe('turn/start')
  expect(result.events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'completed' } })
  expect(llm.requests[0]!.body.messages.at(-1)).toEqual({ role: 'user', content: 'say hello' })
})

test('search finds a stored session by what the model said, with the seq to open it at', async () => {
  llm.enqueue({ text: 'The albatross flew south.' })
  const harness = await sharedHarness()
  const session = await harness.session()
  const result = await session.run('where did it go?')
  const said = result.events.find((event) => event.type === 'assistant/message')!
  const hits = await harness.search('albatross south', { cwd: workspace })
  expect(hits).toEqual([
    expect.objectContaining({
      sessionId: session.id,
      seq: said.seq,
      source: 'assistant',
      firstPrompt: 'where did it go?',
    }),
  ])
})

test('rename names a stored session as its user chose, and delete removes it with its search hit', async () => {
  llm.enqueue({ text: 'The pangolin rolled away.' })
  const harness = await sharedHarness()
  const session = await harness.session()
  await session.run('what did it do?')
  expect(await harness.rename(session.id, ' Pangolin\nnotes ')).toBe('Pangolin notes')
  expect((await harness.list(workspace)).find((summary) => summary.id === session.id)).toMatchObject({
    title: 'Pangolin notes',
    titleSource: 'user',
  })
  expect(await harness.delete(session.id)).toEqual([session.id])
  expect((await harness.list(workspace)).map((summary) => summary.id)).not.toContain(session.id)
  expect(await harness.search('pangolin', { cwd: workspace })).toEqual([])
  await expect(harness.delete('/etc')).rejects.toMatchObject({ code: 'REQUEST_FAILED' })
})

test('a tool-using run edits a file in the workspace (minimal composition)', async () => {
  writeFileSync(join(workspace, 'greeting.txt'), 'hello world\n')
  llm.enqueue(
    {
      toolCalls: [
        {
          name: 'str_replace_editor',
          arguments: { command: 'str_replace', path: 'greeting.txt', old_str: 'world', new_str: 'dsh' },
        },
      ],
    },
    { text: 'Edited.' },
  )
  const harness = await start({ minimal: true })
  const result = await (await harness.session()).run('greet dsh instead')
  expect(result).toMatchObject({ text: 'Edited.', reason: 'completed' })
  expect(readFileSync(join(workspace, 'greeting.txt'), 'utf8')).toBe('hello dsh\n')
  expect(result.events.filter((event) => event.type === 'tool/result').map((event: any) => event.data.error)).toEqual([
    undefined,
  ])
})

test('stream yields events while the model is still answering', async () => {
  llm.enqueue({ text: ['one ', 'two ', 'three ', 'four'], chunkDelayMs: 60 })
  const session = await (await sharedHarness()).session()
  const types: string[] = []
  let streamOpenAtFirstChunk: boolean | undefined
  for await (const event of session.stream('count')) {
    if (event.type === 'assistant/chunk' && streamOpenAtFirstChunk === undefined)
      streamOpenAtFirstChunk = llm.requests[0]!.timing.endedAt === undefined
    types.push(event.type)
  }
  expect(streamOpenAtFirstChunk).toBe(true)
  expect(types.filter((type) => type === 'assistant/chunk')).toHaveLength(4)
  expect(types.at(-1)).toBe('turn/end')
})

test("a running command's printed output streams as tool/output events before its result, and the view's card gathers it", async () => {
  llm.enqueue(
    {
      toolCalls: [
        {
          id: 'live',
          name: 'bash',
          arguments: { command: 'echo line 1; sleep 0.8; echo line 2; sleep 0.8; echo line 3' },
        },
      ],
    },
    { text: 'Printed.' },
  )
  const session = await (await sharedHarness()).session()
  const view = new SessionView()
  const order: string[] = []
  for await (const event of session.stream('print slowly')) {
    view.apply(event)
    const data = event.data as { callId?: string; text?: string }
    if (event.type === ('tool/output' as string) && data.callId === 'live') order.push(`output ${data.text!.trim()}`)
    if (event.type === 'tool/result') order.push('result')
  }
  expect(order[0]).toBe('output line 1') // the first line arrived alone, long before the command ended
  expect(order.at(-1)).toBe('result')
  expect(view.items.find((item) => item.kind === 'tool')).toMatchObject({
    status: 'done',
    printed: { text: 'line 1\nline 2\nline 3\n', capped: false },
  })
})

test('onApproval answers the approval of a call, which then runs', async () => {
  llm.enqueue(
    { toolCalls: [{ id: 'w', name: 'write_file', arguments: { path: 'protected/ok.txt', text: 'allowed' } }] },
    { text: 'written' },
  )
  const asked: unknown[] = []
  const session = await (
    await sharedHarness()
  ).session({ onApproval: (request) => (asked.push(request), 'allow_once') })
  const result = await session.run('write it')
  expect(asked).toEqual([
    expect.objectContaining({
      sessionId: session.id,
      tool: 'write_file',
      summary: 'write protected/ok.txt',
      callId: 'w',
    }),
  ])
  expect(readFileSync(join(workspace, 'protected/ok.txt'), 'utf8')).toBe('allowed')
  expect(result.events.find((event) => event.type === ('approval/decided' as string))).toMatchObject({
    data: { answer: 'allow_once', by: 'user' },
  })
})

test('a stream applied event by event to the re-exported SessionView shows what the stored log folds to', async () => {
  llm.enqueue(
    {
      reasoning: 'Write the file.',
      toolCalls: [{ id: 'v', name: 'write_file', arguments: { path: 'protected/view.txt', text: 'seen' } }],
    },
    { text: ['All ', 'done.'] },
  )
  const session = await (await sharedHarness()).session({ onApproval: () => 'allow_once' })
  const live = new SessionView()
  const streamed: string[] = []
  for await (const event of session.stream('write the view file')) {
    for (const change of live.apply(event))
      if ((change.op === 'added' || change.op === 'updated') && change.delta?.kind === 'text')
        streamed.push(change.delta.text)
  }
  const stored = SessionView.fold(await session.events())
  expect(live.items).toEqual(stored.items)
  expect(streamed.join('')).toBe('All done.')
  // The session's first route is logged with its first prompt: a notice ahead of the conversation.
  expect(stored.items.map((item) => item.kind)).toEqual([
    'notice',
    'user',
    'assistant',
    'tool',
    'assistant',
    'turn-end',
  ])
  expect(stored.items[0]).toMatchObject({ cause: 'route' })
  expect(stored.items[3]).toMatchObject({
    name: 'write_file',
    status: 'done',
    approval: { decided: { answer: 'allow_once', by: 'user' } },
  })
  expect(stored.items.at(-1)).toMatchObject({ reason: 'completed' })
  // The runtime's fold (`session/view`, what the Python SDK reads) is this same fold: the same items, as JSON.
  const served = await session.view()
  expect(served.items).toEqual(JSON.parse(JSON.stringify(stored.items)))
  expect(served.length).toBe((await session.events()).length)
  expect(readFileSync(join(workspace, 'protected/view.txt'), 'utf8')).toBe('seen')
})

test('without an approval callback the call is refused and the file is absent', async () => {
  llm.enqueue(
    { toolCalls: [{ id: 'w', name: 'write_file', arguments: { path: 'protected/no.txt', text: 'x' } }] },
    { text: 'refused' },
  )
  const session = await (await sharedHarness()).session()
  const result = await session.run('write it')
  expect(existsSync(join(workspace, 'protected/no.txt'))).toBe(false)
  expect(result.events.find((event) => event.type === ('approval/decided' as string))).toMatchObject({
    data: { answer: 'reject', by: 'error', note: expect.stringContaining('no onApproval callback') },
  })
})

test('cancel stops a running turn: the run resolves aborted with the text so far', async () => {
  llm.enqueue({ text: ['partial ', 'answer ', 'never ends'], stallAfterChunks: 3 })
  const session = await (await sharedHarness()).session()
  const run = session.run('talk forever')
  await llm.waitForRequests(1)
  await new Promise<void>((resolve) => {
    const stop = setInterval(() => {
      if (llm.requests[0]!.timing.firstByteAt !== undefined) resolve(clearInterval(stop))
    }, 10)
  })
  expect(await session.cancel()).toBe(true)
  const result = await run
  expect(result.reason).toBe('aborted')
  expect(result.events.find((event) => event.type === 'assistant/message')).toMatchObject({
    data: { interrupted: true },
  })
})

test('an aborted signal cancels the run it was given', async () => {
  llm.enqueue({ text: ['a ', 'b '], stallAfterChunks: 2 })
  const session = await (await sharedHarness()).session()
  const controller = new AbortController()
  const chunks: string[] = []
  for await (const event of session.stream('talk', { signal: controller.signal })) {
    if (event.type === 'assistant/chunk') {
      chunks.push(event.data.text)
      controller.abort()
    }
    if (event.type === 'turn/end') expect(event.data.reason).toBe('aborted')
  }
  expect(chunks.length).toBeGreaterThan(0)
})

test('a runtime that dies mid-run fails the run with RUNTIME_EXITED', async () => {
  llm.enqueue({ text: ['never ', 'finished'], stallAfterChunks: 2 })
  const harness = await start()
  const run = (await harness.session()).run('talk')
  await llm.waitForRequests(1)
  process.kill(harness.pid!, 'SIGKILL')
  await expect(run).rejects.toMatchObject({
    code: 'RUNTIME_EXITED',
    message: expect.stringContaining('was killed by SIGKILL'),
  })
  expect(await harness.close()).toMatchObject({ stage: 'already-exited', signal: 'SIGKILL' })
})

test('$DSH_MODEL is the default model of sessions and an explicit model wins', async () => {
  llm.enqueue({ text: 'pro' }, { text: 'flash' })
  const harness = await start({ env: { DSH_MODEL: 'deepseek-v4-pro' } })
  await (await harness.session()).run('which model?')
  await (await harness.session({ model: 'deepseek/deepseek-v4-flash' })).run('and now?')
  expect(llm.requests.map((request) => request.body.model)).toEqual(['deepseek-v4-pro', 'deepseek-v4-flash'])
})

test('a runtime that cannot be found is a RUNTIME_NOT_FOUND error naming the command', async () => {
  const missing = Harness.start({ command: [join(home, 'no-such-dsh')] })
  await expect(missing).rejects.toThrow(DshError)
  await expect(missing).rejects.toMatchObject({
    code: 'RUNTIME_NOT_FOUND',
    message: expect.stringContaining(join(home, 'no-such-dsh')),
  })
  await expect(Harness.start({ command: ['dsh-that-is-not-installed'] })).rejects.toMatchObject({
    code: 'RUNTIME_NOT_FOUND',
    message: expect.stringContaining('"dsh-that-is-not-installed" was not found on PATH'),
  })
})

test('a runtime that exits before answering is a RUNTIME_EXITED error quoting its stderr', async () => {
  const failing = start({ patches: [join(home, 'missing.patch.yml')] })
  await expect(failing).rejects.toMatchObject({
    code: 'RUNTIME_EXITED',
    message: expect.stringMatching(/exited with code 2.*\n.*missing\.patch\.yml: patch file not found/s),
  })
})

test('close shuts the runtime down through the protocol and it exits 0', async () => {
  const harness = await Harness.start({ cwd: workspace, env: { DSH_HOME: home } })
  expect(await harness.close()).toEqual({ stage: 'shutdown', code: 0, signal: null })
  await expect(harness.session()).rejects.toMatchObject({ code: 'CLOSED' })
})

test('a result carries the usage the run logged, its cost at the configured prices, and how long it took', async () => {
  llm.enqueue({ text: 'counted', usage: { input: 120, cacheRead: 360, output: 7 } })
  const session = await (await sharedHarness()).session()
  const result = await session.run('count me')
  expect(result.usage).toEqual({
    requests: 1,
    input: 120,
    cacheRead: 360,
    cacheWrite: 0,
    output: 7,
    cacheHitShare: 0.75,
  })
  expect(result.cost).toBeCloseTo((120 * 2 + 360 * 0.5 + 7 * 10) / 1e6, 12)
  expect(result.cacheSaved).toBeCloseTo((360 * (2 - 0.5)) / 1e6, 12)
  expect(result.unpriced).toEqual([])
  expect(result.durationMs).toBeGreaterThan(0)
  // A model without a price: tokens, and no invented cost.
  llm.enqueue({ text: 'free?', usage: { input: 5, output: 1 } })
  const unpriced = await (await (await sharedHarness()).session({ model: 'deepseek/unpriced-model' })).run('and this?')
  expect(unpriced).toMatchObject({
    cost: null,
    unpriced: ['deepseek/unpriced-model'],
    usage: { requests: 1, input: 5, output: 1 },
  })
})

test('a request over the runtime line limit fails at once with REQUEST_TOO_LARGE, and the harness goes on working', async () => {
  const harness = await sharedHarness()
  expect(harness.info.limits.maxLineBytes).toBe(16 * 1024 * 1024)
  const session = await harness.session()
  const started = Date.now()
  const error = await session.run('x'.repeat(20 * 1024 * 1024)).catch((caught: unknown) => caught)
  expect(error).toBeInstanceOf(DshError)
  expect(error).toMatchObject({
    code: 'REQUEST_TOO_LARGE',
    message: expect.stringMatching(/session\/prompt: the request is \d+ bytes, over the 16777216-byte line limit/),
  })
  expect(Date.now() - started).toBeLessThan(20_000)
  expect(llm.requests).toHaveLength(0)
  llm.enqueue({ text: 'still here' })
  expect((await session.run('small')).text).toBe('still here')
})

test('leaving a stream early cancels that turn: none of its events reach the next run', async () => {
  const session = await (await sharedHarness()).session()
  // A slow answer: the stream is left at its first streamed chunk, long before the reply ends.
  llm.enqueue({ text: 'a slow answer that nobody waits for', chunkDelayMs: 200 })
  const seen: string[] = []
  for await (const event of session.stream('start something slow')) {
    seen.push(event.type)
    if (event.type === 'assistant/chunk') break
  }
  expect(seen[0]).toBe('turn/start')
  llm.enqueue({ text: 'the next answer' })
  const next = await session.run('next')
  expect(next.text).toBe('the next answer')
  // Exactly one turn in the next run's events, and it is the next run's own.
  expect(next.events.filter((event) => event.type === 'turn/start')).toHaveLength(1)
  expect(next.events[0]).toMatchObject({ type: 'turn/start' })
  const ends = (await session.events())
    .filter((event) => event.type === 'turn/end')
    .map((event) => (event.data as { reason: string }).reason)
  expect(ends).toEqual(['aborted', 'completed'])
})

test('an MCP server passed as mcpServers on session creation serves a tool the scripted model calls', async () => {
  const server = fileURLToPath(new URL('../../../mcp/mcp-client/src/fixtures/test-server.mjs', import.meta.url))
  llm.enqueue({ toolCalls: [{ id: 'm', name: 'mcp__sdk__echo', arguments: { text: 'from ts' } }] }, { text: 'done' })
  const harness = await sharedHarness()
  const session = await harness.session({
    mcpServers: { sdk: { command: process.execPath, args: [server], trust: 'allow' } },
  })
  const result = await session.run('use the server')
  const results = result.events.filter((event) => event.type === 'tool/result')
  expect(results.map((event) => (event.data as { content: { text: string }[] }).content[0]!.text)).toEqual([
    'echo: from ts',
  ])
  const error = await harness
    .session({ mcpServers: { 'bad name': { command: 'x' } } })
    .catch((failure: DshError) => failure)
  expect(String(error)).toMatch(/mcpServers/)
})
