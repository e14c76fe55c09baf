// The TypeScript SDK's options for programs against the real runtime (`dsh --profile sdk` from dist: build
// first) and the mock model server: client-defined tools, per-call step limits and tool filters.
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, expect, test } from 'vitest'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import { WITHOUT_AUTO_TITLE } from '@dsh/test-harness'
import { DshError, Harness, type AnySessionEvent, type ApprovalRequestParams, type ToolCallParams } from './index.ts'

/** The client tools' deadline in this runtime (the `clientToolTimeoutMs` of the sdk-server row). */
const CLIENT_TOOL_TIMEOUT_MS = 5_000

let llm: MockServer
let home: string
let workspace: string
let harness: Harness

beforeAll(async () => {
  llm = await startMockServer()
  home = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-sdk-home-')))
  workspace = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-sdk-ws-')))
  const fixtureTools = createRequire(import.meta.url)
    .resolve('@dsh/test-harness/fixture-tools')
    .replace(/\/src\/(.*)\.ts$/, '/dist/$1.js')
  const patch = join(home, 'programs.patch.yml')
  writeFileSync(
    patch,
    `- insert: [{ id: fixture-tools, name: ${JSON.stringify(fixtureTools)} }]\n- id: sdk-server\n  config: { clientToolTimeoutMs: ${CLIENT_TOOL_TIMEOUT_MS} }\n${WITHOUT_AUTO_TITLE}`,
  )
  harness = await Harness.start({
    cwd: workspace,
    patches: [patch],
    env: { DSH_HOME: home, DEEPSEEK_BASE_URL: llm.url, DEEPSEEK_API_KEY: 'test' },
  })
})
beforeEach(() => llm.reset())
afterAll(async () => {
  await harness?.close()
  await llm.close()
  rmSync(home, { recursive: true, force: true })
  rmSync(workspace, { recursive: true, force: true })
})

const weather = {
  name: 'get_weather',
  description: 'The weather in a city.',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string', minLength: 1 } },
    required: ['city'],
    additionalProperties: false,
  },
}
const call = (id: string, name: string, args: Record<string, unknown>) => ({
  toolCalls: [{ id, name, arguments: args }],
})
const sentTools = (index: number): string[] =>
  llm.requests[index]!.body.tools.map((tool: { function: { name: string } }) => tool.function.name)
const ofType = (events: AnySessionEvent[], type: string) =>
  events.filter((event) => (event.type as string) === type).map((event) => event.data as any)

test('a client tool is offered to the model, its call runs the handler, and the result is logged like any tool result', async () => {
  const calls: ToolCallParams[] = []
  const session = await harness.session({
    tools: [{ ...weather, handler: (args, params) => (calls.push(params), `sunny in ${args.city}`) }],
  })
  llm.enqueue(call('c1', 'get_weather', { city: 'Lyon' }), { text: 'It is sunny.' })
  const result = await session.run('weather in Lyon?')
  expect(result).toMatchObject({ reason: 'completed', text: 'It is sunny.' })
  expect(calls).toEqual([{ sessionId: session.id, callId: 'c1', tool: 'get_weather', arguments: { city: 'Lyon' } }])
  expect(sentTools(0)).toContain('get_weather')
  expect(
    llm.requests[0]!.body.tools.find((tool: any) => tool.function.name === 'get_weather').function.parameters,
  ).toEqual(weather.parameters)
  expect(ofType(result.events, 'tool/result')).toEqual([
    { callId: 'c1', content: [{ type: 'text', text: 'sunny in Lyon' }] },
  ])
  // The tool list change is in the log: the declaration and the request header the request was checked against.
  const stored = await session.events()
  expect(ofType(stored, 'sdk/client-tools')).toEqual([{ tools: [weather] }])
  expect(
    ofType(stored, 'request/header')
      .at(-1)
      .tools.map((tool: { name: string }) => tool.name),
  ).toContain('get_weather')
  expect(llm.requests[1]!.body.messages.at(-1)).toMatchObject({ role: 'tool', content: 'sunny in Lyon' })
})

test('arguments that break the schema never reach the handler: INVALID_ARGS', async () => {
  let called = false
  const session = await harness.session({ tools: [{ ...weather, handler: () => ((called = true), 'never') }] })
  llm.enqueue(call('c1', 'get_weather', { city: '', extra: 'x' }), { text: 'ok' })
  const result = await session.run('weather?')
  expect(called).toBe(false)
  expect(ofType(result.events, 'tool/result')[0].error.code).toBe('INVALID_ARGS')
})

test('a handler that throws is a TOOL_FAILED result carrying its message; the session goes on', async () => {
  const session = await harness.session({
    tools: [
      {
        ...weather,
        handler: () => {
          throw new Error('the weather service is down')
        },
      },
    ],
  })
  llm.enqueue(call('c1', 'get_weather', { city: 'Oslo' }), { text: 'sorry' })
  const result = await session.run('weather?')
  expect(result.reason).toBe('completed')
  const [failed] = ofType(result.events, 'tool/result')
  expect(failed.error).toMatchObject({
    code: 'TOOL_FAILED',
    message: expect.stringContaining('the weather service is down'),
  })
})

test('a handler that never answers is a TOOL_TIMEOUT result after clientToolTimeoutMs', async () => {
  const session = await harness.session({ tools: [{ ...weather, handler: () => new Promise<string>(() => {}) }] })
  llm.enqueue(call('c1', 'get_weather', { city: 'Rome' }), { text: 'too slow' })
  const started = Date.now()
  const result = await session.run('weather?')
  expect(Date.now() - started).toBeGreaterThanOrEqual(CLIENT_TOOL_TIMEOUT_MS)
  expect(ofType(result.events, 'tool/result')[0].error.code).toBe('TOOL_TIMEOUT')
})

test('a client tool cannot take the name of a built-in tool or an MCP tool, repeat a name, or bring a schema that does not compile', async () => {
  const attempt = (tools: (typeof weather)[]) =>
    harness.session({ tools: tools.map((tool) => ({ ...tool, handler: () => 'shadowed' })) })
  for (const [tools, field] of [
    [[{ ...weather, name: 'bash' }], 'tools[0].name'],
    [[{ ...weather, name: 'mcp__evil__read' }], 'tools[0].name'],
    [[weather, weather], 'tools[1].name'],
    [[{ ...weather, parameters: { type: 'string' } }], 'tools[0].parameters'],
    [
      [{ ...weather, parameters: { type: 'object', properties: { city: { type: 'no-such-type' } } } }],
      'tools[0].parameters',
    ],
  ] as const) {
    const error = await attempt(tools as unknown as (typeof weather)[]).catch((failure) => failure)
    expect(error).toBeInstanceOf(DshError)
    expect(error.rpc).toMatchObject({ data: { field } })
  }
  expect(llm.requests).toHaveLength(0)
})

test('a client tool with approval asks first; refused, the handler never runs', async () => {
  let called = false
  const session = await harness.session({
    tools: [{ ...weather, approval: true, handler: () => ((called = true), 'ran') }],
    onApproval: () => 'reject',
  })
  llm.enqueue(call('c1', 'get_weather', { city: 'Bern' }), { text: 'refused' })
  const result = await session.run('weather?')
  expect(called).toBe(false)
  expect(ofType(result.events, 'tool/result')[0].error.code).toBe('APPROVAL_REJECTED')
})

test('maxSteps of one run ends its turn with max-steps after that many model requests', async () => {
  const session = await harness.session({ tools: [{ ...weather, handler: () => 'rain' }] })
  llm.enqueue(call('c1', 'get_weather', { city: 'A' }), call('c2', 'get_weather', { city: 'B' }), {
    text: 'never asked',
  })
  const result = await session.run('keep asking', { maxSteps: 2 })
  expect(result.reason).toBe('max-steps')
  expect(llm.requests).toHaveLength(2)
  // The next run without the option has the runtime's limit again.
  llm.reset()
  llm.enqueue(call('c3', 'get_weather', { city: 'C' }), call('c4', 'get_weather', { city: 'D' }), { text: 'done' })
  expect((await session.run('again')).reason).toBe('completed')
  expect(llm.requests).toHaveLength(3)
})

test('allowedTools changes the tool list the model gets, and a filtered tool the model names anyway does not exist for it', async () => {
  const session = await harness.session({ allowedTools: ['write_file'] })
  llm.enqueue(call('b1', 'bash', { command: 'touch escaped.txt' }), { text: 'ok' })
  const result = await session.run('try bash')
  expect(sentTools(0)).toEqual(['write_file'])
  expect(ofType(result.events, 'tool/result')[0].error).toMatchObject({
    code: 'UNKNOWN_TOOL',
    message: 'There is no tool named "bash". Available tools: write_file.',
  })
  expect(existsSync(join(workspace, 'escaped.txt'))).toBe(false)
  const stored = await session.events()
  expect(ofType(stored, 'sdk/tool-filter')).toEqual([{ allowed: ['write_file'] }])
  expect(
    ofType(stored, 'request/header')
      .at(-1)
      .tools.map((tool: { name: string }) => tool.name),
  ).toEqual(['write_file'])
})

test('disallowedTools on a run removes a tool from then on', async () => {
  const session = await harness.session()
  llm.enqueue({ text: 'one' }, { text: 'two' })
  await session.run('first')
  expect(sentTools(0)).toContain('bash')
  await session.run('second', { disallowedTools: ['bash'] })
  expect(sentTools(1)).not.toContain('bash')
  expect(sentTools(1)).toContain('write_file')
})

test('the approval callback gets the structured call and may allow it with edited arguments: the edited call runs and is logged', async () => {
  const asked: ApprovalRequestParams[] = []
  const session = await harness.session({
    onApproval: (request) => (
      asked.push(request),
      {
        answer: 'allow_once',
        arguments: { ...request.arguments, path: 'protected/reviewed.txt', text: 'reviewed text' },
      }
    ),
  })
  llm.enqueue(call('w1', 'write_file', { path: 'protected/model.txt', text: 'model text' }), { text: 'done' })
  const result = await session.run('write it')
  expect(asked).toEqual([
    expect.objectContaining({
      tool: 'write_file',
      callId: 'w1',
      arguments: { path: 'protected/model.txt', text: 'model text' },
      reason: 'it writes under protected/ (protected/model.txt)',
    }),
  ])
  expect(readFileSync(join(workspace, 'protected/reviewed.txt'), 'utf8')).toBe('reviewed text')
  expect(existsSync(join(workspace, 'protected/model.txt'))).toBe(false)
  expect(ofType(result.events, 'tool/edited')).toEqual([
    { callId: 'w1', arguments: { path: 'protected/reviewed.txt', text: 'reviewed text' } },
  ])
  expect(ofType(result.events, 'approval/decided')[0]).toMatchObject({
    answer: 'allow_once',
    by: 'user',
    actor: 'client:sdk',
    edited: true,
  })
  // The model reads that its call was edited, and how.
  expect(llm.requests[1]!.body.messages.at(-1).content).toContain(
    'it ran with: {"path":"protected/reviewed.txt","text":"reviewed text"}',
  )
})

test('edited arguments that break the schema are refused and nothing is written', async () => {
  const session = await harness.session({
    onApproval: () => ({ answer: 'allow_once', arguments: { path: 'protected/half.txt' } }),
  })
  llm.enqueue(call('w1', 'write_file', { path: 'protected/whole.txt', text: 'x' }), { text: 'done' })
  const result = await session.run('write it')
  expect(ofType(result.events, 'tool/result')[0].error.code).toBe('INVALID_ARGS')
  expect(existsSync(join(workspace, 'protected/half.txt'))).toBe(false)
  expect(existsSync(join(workspace, 'protected/whole.txt'))).toBe(false)
})

test('a refusal with a message: the model reads the message', async () => {
  const session = await harness.session({
    onApproval: () => ({ answer: 'reject', message: 'write under staging/ instead' }),
  })
  llm.enqueue(call('w1', 'write_file', { path: 'protected/no.txt', text: 'x' }), { text: 'ok' })
  const result = await session.run('write it')
  expect(ofType(result.events, 'tool/result')[0].error).toMatchObject({
    code: 'APPROVAL_REJECTED',
    message: expect.stringContaining('Their message: write under staging/ instead'),
  })
  expect(ofType(result.events, 'approval/decided')[0]).toMatchObject({
    answer: 'reject',
    by: 'user',
    message: 'write under staging/ instead',
  })
  expect(llm.requests[1]!.body.messages.at(-1).content).toContain('write under staging/ instead')
  expect(existsSync(join(workspace, 'protected/no.txt'))).toBe(false)
})

test("a subagent is bounded by its parent's tool filter: a program that forbids bash does not get it through task", async () => {
  const session = await harness.session({ disallowedTools: ['bash'] })
  llm.enqueue(
    call('t1', 'task', { description: 'touch a file', prompt: 'run touch child-escaped.txt with bash' }),
    call('b1', 'bash', { command: 'touch child-escaped.txt' }),
    { text: 'could not' },
    { text: 'ok' },
  )
  const result = await session.run('delegate it')
  expect(result.reason).toBe('completed')
  expect(existsSync(join(workspace, 'child-escaped.txt'))).toBe(false)
  // The child's own request offered no bash, and its call of it anyway did not exist for it.
  expect(sentTools(1)).not.toContain('bash')
  expect(sentTools(1).length).toBeGreaterThan(0)
  expect(JSON.stringify(llm.requests[2]!.body.messages)).toContain('There is no tool named \\"bash\\"')
})
