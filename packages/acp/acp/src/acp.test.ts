import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest'
import type {
  InitializeResponse,
  RequestPermissionRequest,
  RequestPermissionResponse,
  SessionUpdate,
} from '@agentclientprotocol/sdk'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import { startAgent, type AgentProcess } from './test-support/agent-process.ts'

// The product as shipped: the real DeepSeek adapter talks to the mock server, the tools are the product's
// own (`write`, `read`, `edit`, `bash`) acting on real files and processes. A failed model request is
// retried after tens of milliseconds instead of seconds.
const PATCH = `
- id: llm-retry
  config: { baseDelayMs: 40 }
`
const KEY = 'test-key-0123456789'

let llm: MockServer
let agent: AgentProcess
let init: InitializeResponse
let answer: (request: RequestPermissionRequest) => RequestPermissionResponse = () => ({
  outcome: { outcome: 'cancelled' },
})

beforeAll(async () => {
  llm = await startMockServer()
  const started = await startAgent({
    patch: PATCH,
    env: { DEEPSEEK_BASE_URL: llm.url, DEEPSEEK_API_KEY: KEY },
    permission: (request) => answer(request),
  })
  agent = started
  init = started.initialized
})
afterAll(async () => {
  await agent?.dispose()
  await llm?.close()
})
afterEach(() => llm.reset())

const newSession = async () =>
  (await agent.agent.request('session/new', { cwd: agent.workspace, mcpServers: [] })).sessionId
const prompt = (sessionId: string, text: string) =>
  agent.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] })
const call = (id: string, name: string, args: Record<string, unknown>) => ({
  toolCalls: [{ id, name, arguments: args }],
})
type Kind = SessionUpdate['sessionUpdate']
const of = <K extends Kind>(updates: SessionUpdate[], kind: K) =>
  updates.filter((u): u is Extract<SessionUpdate, { sessionUpdate: K }> => u.sessionUpdate === kind)
const textOf = (updates: SessionUpdate[], kind: 'agent_message_chunk' | 'agent_thought_chunk' | 'user_message_chunk') =>
  of(updates, kind)
    .map((u) => (u.content.type === 'text' ? u.content.text : ''))
    .join('')
const rpcError = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error) => error as { code: number; message: string },
  )
/** Command lines of live processes that mention `text`. */
const processesRunning = (text: string) =>
  readdirSync('/proc').flatMap((pid) => {
    try {
      const line = /^\d+$/.test(pid) ? readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim() : ''
      return line.includes(text) ? [line] : []
    } catch {
      return []
    }
  })
/** Resolves once `test` holds (checked every 20 ms); fails after 10 s. */
const until = (test: () => boolean) => vi.waitUntil(test, { timeout: 30_000, interval: 20 })
const selected = (optionId: string): RequestPermissionResponse => ({ outcome: { outcome: 'selected', optionId } })

describe('initialize and session setup', () => {
  test('initialize advertises protocol 1, session loading, and no images for a text-only route', () => {
    expect(init.protocolVersion).toBe(1)
    expect(init.agentCapabilities).toMatchObject({
      loadSession: true,
      promptCapabilities: { image: false, audio: false, embeddedContext: true },
    })
    expect(init.agentCapabilities?.sessionCapabilities).toMatchObject({ list: {}, resume: {}, close: {} })
    // The route's key is present, so no authentication is needed.
    expect(init.authMethods).toEqual([])
  })

  test('a new session needs an absolute working directory', async () => {
    const error = await rpcError(agent.agent.request('session/new', { cwd: 'relative/dir', mcpServers: [] }))
    expect(error).toMatchObject({ code: -32602, message: expect.stringContaining('cwd must be an absolute path') })
  })

  test('an MCP server passed by the editor in session/new is connected: the model calls its tool, the editor approves it', async () => {
    expect(init.agentCapabilities?.mcpCapabilities).toEqual({ http: true, sse: true })
    const server = fileURLToPath(new URL('../../../mcp/mcp-client/src/fixtures/test-server.mjs', import.meta.url))
    const { sessionId } = await agent.agent.request('session/new', {
      cwd: agent.workspace,
      mcpServers: [
        { name: 'editor', command: process.execPath, args: [server], env: [{ name: 'GIVEN', value: 'by-editor' }] },
      ],
    })
    const asked: RequestPermissionRequest[] = []
    answer = (request) => (asked.push(request), selected('allow_once'))
    llm.enqueue(call('m1', 'mcp__editor__echo', { text: 'from zed' }), call('m2', 'mcp__editor__env', {}), {
      text: 'Done.',
    })
    await prompt(sessionId, 'use the editor server')
    answer = () => ({ outcome: { outcome: 'cancelled' } })
    expect(asked.map((request) => request.toolCall.toolCallId)).toEqual(['m1', 'm2'])
    const body = JSON.stringify(llm.requests.at(-1)!.body)
    expect(body).toContain('echo: from zed')
    expect(body).toContain('GIVEN=by-editor')
  })

  test("an MCP tool's progress reaches the editor while it runs, and its image is in the call's content", async () => {
    const server = fileURLToPath(new URL('../../../mcp/mcp-client/src/fixtures/test-server.mjs', import.meta.url))
    const { sessionId } = await agent.agent.request('session/new', {
      cwd: agent.workspace,
      mcpServers: [{ name: 'editor', command: process.execPath, args: [server], env: [] }],
    })
    answer = () => selected('allow_once')
    llm.enqueue(call('progress-1', 'mcp__editor__steps', { n: 3 }), call('progress-2', 'mcp__editor__media', {}), {
      text: 'Done.',
    })
    await prompt(sessionId, 'work through it')
    answer = () => ({ outcome: { outcome: 'cancelled' } })
    const updates = of(agent.updates(sessionId), 'tool_call_update')
    const texts = (update: (typeof updates)[number]) =>
      (update.content ?? []).flatMap((item) =>
        item.type === 'content' && item.content.type === 'text' ? [item.content.text] : [],
      )
    const steps = updates.filter((update) => update.toolCallId === 'progress-1')
    const running = steps.findIndex((update) =>
      texts(update).some((text) => text.includes('[progress 1/3] step 1 of 3')),
    )
    const done = steps.findIndex((update) => update.status === 'completed')
    expect(running).toBeGreaterThanOrEqual(0)
    expect(running).toBeLessThan(done)
    expect(texts(steps[done]!).join('')).toContain('did 3 steps')
    const image = updates
      .find((update) => update.toolCallId === 'progress-2' && update.status === 'completed')!
      .content!.flatMap((item) => (item.type === 'content' && item.content.type === 'image' ? [item.content] : []))
    expect(image).toHaveLength(1)
    expect(image[0]!.mimeType).toBe('image/png')
    expect(Buffer.from(image[0]!.data, 'base64').subarray(1, 4).toString()).toBe('PNG')
    // Progress is for the person: the model reads the result alone.
    const body = JSON.stringify(llm.requests.at(-1)!.body)
    expect(body).toContain('did 3 steps')
    expect(body).not.toContain('[progress')
  })

  test('an editor MCP server that cannot start or dies at once is told to the editor by name and cause', async () => {
    const { sessionId } = await agent.agent.request('session/new', {
      cwd: agent.workspace,
      mcpServers: [
        { name: 'absent', command: '/nonexistent/mcp-server-binary', args: [], env: [] },
        { name: 'dies', command: process.execPath, args: ['-e', 'process.exit(3)'], env: [] },
      ],
    })
    llm.enqueue({ text: 'Working without them.' })
    await prompt(sessionId, 'go on')
    type Call = Extract<SessionUpdate, { sessionUpdate: 'tool_call' }>
    const trouble = () =>
      of(agent.updates(sessionId), 'tool_call').filter((u: Call) => u.toolCallId.startsWith('dsh-mcp-'))
    await until(() => trouble().length >= 2)
    const serverOf = (u: Call) => (u._meta as Record<string, { server: string }>)['dsh/mcp'].server
    const byServer = new Map(trouble().map((u: Call) => [serverOf(u), u]))
    for (const name of ['absent', 'dies']) {
      const update = byServer.get(name)!
      expect(update).toMatchObject({ status: 'failed', title: expect.stringContaining(`MCP server "${name}"`) })
      const said = (update.content![0] as { content: { text: string } }).content.text
      expect(said).toMatch(
        name === 'absent' ? /cannot run \/nonexistent\/mcp-server-binary/ : /"dies" failed to initialize/,
      )
    }
    expect(textOf(agent.updates(sessionId), 'agent_message_chunk')).toBe('Working without them.')
  })

  test('an MCP server with a name dsh cannot use is refused by name before any session exists', async () => {
    const error = await rpcError(
      agent.agent.request('session/new', {
        cwd: agent.workspace,
        mcpServers: [{ type: 'http', name: 'bad__name', url: 'http://127.0.0.1:1/mcp', headers: [] }],
      }),
    )
    expect(error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/MCP server "bad__name": its name must be/),
    })
  })

  test('a new session offers the route as its model option', async () => {
    const response = await agent.agent.request('session/new', { cwd: agent.workspace, mcpServers: [] })
    const model = response.configOptions?.find((option) => option.id === 'model')
    expect(model).toMatchObject({ category: 'model', currentValue: 'deepseek/deepseek-v4-flash' })
  })
})

describe('a prompt turn', () => {
  test('text streams as several message chunks that all arrive before the prompt resolves', async () => {
    const sessionId = await newSession()
    llm.enqueue({ text: ['Hel', 'lo ', 'from ', 'dsh'] })
    const response = await prompt(sessionId, 'hi')
    expect(response.stopReason).toBe('end_turn')
    const chunks = of(agent.updates(sessionId), 'agent_message_chunk')
    expect(chunks.length).toBeGreaterThanOrEqual(4)
    expect(textOf(agent.updates(sessionId), 'agent_message_chunk')).toBe('Hello from dsh')
    expect(llm.requests[0]!.body.messages.at(-1)).toMatchObject({ role: 'user', content: 'hi' })
  })

  test('chunks reach the editor while the model is still answering', async () => {
    const sessionId = await newSession()
    // The role delta and two text deltas, then the model goes silent until it is cancelled.
    llm.enqueue({ text: ['one ', 'two ', 'three'], stallAfterChunks: 3 })
    const pending = prompt(sessionId, 'count')
    await agent.waitForUpdate(sessionId, () => textOf(agent.updates(sessionId), 'agent_message_chunk') === 'one two ')
    await agent.agent.notify('session/cancel', { sessionId })
    expect((await pending).stopReason).toBe('cancelled')
  })

  test('reasoning streams as thought chunks before the answer', async () => {
    const sessionId = await newSession()
    llm.enqueue({ reasoning: ['Let me ', 'think.'], text: 'Done.' })
    await prompt(sessionId, 'think first')
    const updates = agent.updates(sessionId)
    expect(textOf(updates, 'agent_thought_chunk')).toBe('Let me think.')
    expect(updates.findIndex((u) => u.sessionUpdate === 'agent_thought_chunk')).toBeLessThan(
      updates.findIndex((u) => u.sessionUpdate === 'agent_message_chunk'),
    )
  })

  test('a tool call is shown pending with its diff and location, then in progress, then completed', async () => {
    const sessionId = await newSession()
    const file = join(agent.workspace, 'greeting.txt')
    llm.enqueue(call('w1', 'write', { path: 'greeting.txt', content: 'hello\n' }), { text: 'Written.' })
    await prompt(sessionId, 'write a greeting')
    expect(readFileSync(file, 'utf8')).toBe('hello\n')
    const updates = agent.updates(sessionId)
    const started = of(updates, 'tool_call').find((u) => u.toolCallId === 'w1')!
    expect(started).toMatchObject({
      kind: 'edit',
      status: 'pending',
      title: 'write greeting.txt',
      locations: [{ path: file }],
    })
    expect(started.content).toEqual([{ type: 'diff', path: file, oldText: null, newText: 'hello\n' }])
    const statuses = of(updates, 'tool_call_update')
      .filter((u) => u.toolCallId === 'w1')
      .map((u) => u.status)
    expect(statuses).toEqual(['in_progress', 'completed'])
  })

  test('an edit shows the whole file before and after as its diff', async () => {
    const sessionId = await newSession()
    const file = join(agent.workspace, 'poem.txt')
    writeFileSync(file, 'roses are red\nviolets are blue\n')
    llm.enqueue(
      call('r1', 'read', { path: 'poem.txt' }),
      call('e1', 'edit', { path: 'poem.txt', old_string: 'blue', new_string: 'green' }),
      { text: 'Edited.' },
    )
    await prompt(sessionId, 'change the colour')
    expect(readFileSync(file, 'utf8')).toBe('roses are red\nviolets are green\n')
    const updates = agent.updates(sessionId)
    expect(of(updates, 'tool_call').find((u) => u.toolCallId === 'r1')).toMatchObject({
      kind: 'read',
      title: 'read poem.txt',
      content: [],
    })
    const edit = of(updates, 'tool_call').find((u) => u.toolCallId === 'e1')!
    expect(edit.content).toEqual([
      {
        type: 'diff',
        path: file,
        oldText: 'roses are red\nviolets are blue\n',
        newText: 'roses are red\nviolets are green\n',
      },
    ])
    expect(
      of(updates, 'tool_call_update')
        .filter((u) => u.toolCallId === 'e1')
        .at(-1),
    ).toMatchObject({ status: 'completed', content: [{ type: 'diff' }, { type: 'content' }] })
  })

  test("a command shows its output as the call's content", async () => {
    const sessionId = await newSession()
    llm.enqueue(call('b1', 'bash', { command: 'echo from-the-shell' }), { text: 'Ran it.' })
    await prompt(sessionId, 'run echo')
    const done = of(agent.updates(sessionId), 'tool_call_update')
      .filter((u) => u.toolCallId === 'b1')
      .at(-1)!
    expect(done.status).toBe('completed')
    expect(JSON.stringify(done.content)).toContain('from-the-shell')
    expect(of(agent.updates(sessionId), 'tool_call').find((u) => u.toolCallId === 'b1')).toMatchObject({
      kind: 'execute',
      title: 'bash: echo from-the-shell',
    })
  })

  test("a running command's printed lines reach the editor as the call's content before the command ends", async () => {
    const sessionId = await newSession()
    llm.enqueue(call('live', 'bash', { command: 'echo line 1; sleep 1; echo line 2; sleep 1; echo line 3' }), {
      text: 'Printed.',
    })
    const pending = prompt(sessionId, 'print slowly')
    const live = () => of(agent.updates(sessionId), 'tool_call_update').filter((u) => u.toolCallId === 'live')
    await agent.waitForUpdate(sessionId, () => live().some((u) => JSON.stringify(u.content ?? []).includes('line 1')))
    const first = live().find((u) => JSON.stringify(u.content ?? []).includes('line 1'))!
    expect(first.status).toBeUndefined() // an update during the command, not its end
    expect(JSON.stringify(first.content)).not.toContain('line 3')
    expect(live().some((u) => u.status === 'completed')).toBe(false)
    await pending
    expect(live().at(-1)).toMatchObject({ status: 'completed' })
    expect(JSON.stringify(live().at(-1)!.content)).toContain('line 1\\nline 2\\nline 3')
  })

  test('a failing model answers the prompt with an error that names the failure', async () => {
    const sessionId = await newSession()
    llm.enqueue({ error: { status: 400, message: 'the request was malformed' } })
    const error = await rpcError(prompt(sessionId, 'fail please'))
    expect(error).toMatchObject({ code: -32603, message: expect.stringContaining('the request was malformed') })
  })

  test('a model request being retried is told to the editor as a thought, before the answer arrives', async () => {
    const sessionId = await newSession()
    llm.enqueue({ error: { status: 500, message: 'upstream overloaded' } }, { text: 'second time lucky' })
    expect(await prompt(sessionId, 'hello?')).toMatchObject({ stopReason: 'end_turn' })
    const updates = agent.updates(sessionId)
    const thought = updates.findIndex(
      (u) =>
        u.sessionUpdate === 'agent_thought_chunk' &&
        u.content.type === 'text' &&
        u.content.text.includes('Model request failed'),
    )
    expect(thought).toBeGreaterThanOrEqual(0)
    expect(textOf(updates, 'agent_thought_chunk')).toMatch(
      /Model request failed \(SERVER\); retrying in \d+ ms — retry 1 of 4/,
    )
    expect(thought).toBeLessThan(updates.findIndex((u) => u.sessionUpdate === 'agent_message_chunk'))
    expect(textOf(updates, 'agent_message_chunk')).toBe('second time lucky')
    expect(of(updates, 'notice')).toEqual([])
  })

  test('an editor that presents notices gets the retry as a warning notice naming the failure', async () => {
    const editor = await startAgent({
      patch: PATCH,
      env: { DEEPSEEK_BASE_URL: llm.url, DEEPSEEK_API_KEY: KEY },
      capabilities: { session: { notices: {} } },
    })
    try {
      const sessionId = (await editor.agent.request('session/new', { cwd: editor.workspace, mcpServers: [] })).sessionId
      llm.enqueue({ error: { status: 500, message: 'upstream overloaded' } }, { text: 'second time lucky' })
      await editor.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello?' }] })
      const updates = editor.updates(sessionId)
      expect(of(updates, 'notice')).toEqual([
        expect.objectContaining({
          severity: 'warning',
          title: expect.stringMatching(/^Model request failed \(SERVER\); retrying in \d+ ms — retry 1 of 4$/),
          description: expect.stringContaining('upstream overloaded'),
        }),
      ])
      expect(textOf(updates, 'agent_thought_chunk')).not.toContain('Model request failed')
    } finally {
      await editor.dispose()
    }
  })

  test('an image prompt is refused for a route without images', async () => {
    const sessionId = await newSession()
    const error = await rpcError(
      agent.agent.request('session/prompt', {
        sessionId,
        prompt: [{ type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' }],
      }),
    )
    expect(error).toMatchObject({ code: -32602, message: expect.stringContaining('does not accept images') })
    expect(llm.requests).toHaveLength(0)
  })

  test('an embedded resource reaches the model with its source', async () => {
    const sessionId = await newSession()
    llm.enqueue({ text: 'seen' })
    await agent.agent.request('session/prompt', {
      sessionId,
      prompt: [
        { type: 'text', text: 'look:' },
        { type: 'resource', resource: { uri: `file://${agent.workspace}/a.ts`, text: 'const a = 1' } },
      ],
    })
    expect(JSON.stringify(llm.requests[0]!.body.messages.at(-1))).toContain(
      `<context source=\\"${agent.workspace}/a.ts\\">\\nconst a = 1`,
    )
  })
})

describe('permissions', () => {
  // A command that asks to run outside the sandbox needs the user's approval.
  const unconfined = (id: string) =>
    call(id, 'bash', { command: `touch ${id}.txt`, sandbox: false, justification: 'the test needs it' })

  test('an allowed call runs: the editor was offered allow once, the two standing grants of its rule (allow_always) and reject once', async () => {
    answer = () => selected('allow_once')
    const sessionId = await newSession()
    llm.enqueue(unconfined('p1'), { text: 'done' })
    await prompt(sessionId, 'touch a file')
    expect(existsSync(join(agent.workspace, 'p1.txt'))).toBe(true)
    const request = agent.permissionRequests.find((r) => r.toolCall.toolCallId === 'p1')!
    expect(request.options.map((option) => [option.optionId, option.kind, option.name])).toEqual([
      ['allow_once', 'allow_once', 'Allow once'],
      ['allow_session', 'allow_always', 'Allow unconfined(touch *) for this session'],
      ['allow_always', 'allow_always', 'Always allow unconfined(touch *) in this workspace'],
      ['reject_once', 'reject_once', 'Reject'],
    ])
    expect(JSON.stringify(request.toolCall.content)).toContain('outside the sandbox')
    expect(
      of(agent.updates(sessionId), 'tool_call_update')
        .filter((u) => u.toolCallId === 'p1')
        .at(-1)?.status,
    ).toBe('completed')
  })

  test('allow_always keeps the rule in grants.yaml under the editor client: the next matching command is not asked', async () => {
    answer = () => selected('allow_always')
    const sessionId = await newSession()
    // Its own program (dd), so the grant it keeps covers no other test's command in this shared workspace.
    const dd = (id: string) =>
      call(id, 'bash', { command: `dd if=/dev/null of=${id}.txt`, sandbox: false, justification: 'the test needs it' })
    llm.enqueue(dd('g1'), dd('g2'), { text: 'done' })
    await prompt(sessionId, 'touch two files')
    expect(existsSync(join(agent.workspace, 'g1.txt'))).toBe(true)
    expect(existsSync(join(agent.workspace, 'g2.txt'))).toBe(true)
    expect(
      agent.permissionRequests
        .filter((r) => ['g1', 'g2'].includes(r.toolCall.toolCallId))
        .map((r) => r.toolCall.toolCallId),
    ).toEqual(['g1'])
    const grants = readFileSync(join(agent.home, 'grants.yaml'), 'utf8')
    expect(grants).toContain('rule: unconfined(dd *)')
    expect(grants).toContain('actor: client:acp')
  })

  test('a rejected call does not run and is shown failed', async () => {
    answer = () => selected('reject_once')
    const sessionId = await newSession()
    llm.enqueue(unconfined('p2'), { text: 'understood' })
    await prompt(sessionId, 'touch a file')
    expect(existsSync(join(agent.workspace, 'p2.txt'))).toBe(false)
    expect(
      of(agent.updates(sessionId), 'tool_call_update')
        .filter((u) => u.toolCallId === 'p2')
        .at(-1)?.status,
    ).toBe('failed')
    expect(JSON.stringify(llm.requests[1]!.body.messages.at(-1))).toContain('the user rejected it')
  })

  test('a permission request the editor cancels is a rejection', async () => {
    answer = () => ({ outcome: { outcome: 'cancelled' } })
    const sessionId = await newSession()
    llm.enqueue(unconfined('p3'), { text: 'ok' })
    await prompt(sessionId, 'touch a file')
    expect(existsSync(join(agent.workspace, 'p3.txt'))).toBe(false)
    expect(
      of(agent.updates(sessionId), 'tool_call_update')
        .filter((u) => u.toolCallId === 'p3')
        .at(-1)?.status,
    ).toBe('failed')
  })
})

describe('cancel, modes and models', () => {
  test('cancel during a tool call ends the prompt as cancelled and stops the command', async () => {
    const sessionId = await newSession()
    // A duration no other process uses, so the command can be found (and found gone) in /proc.
    const command = `sleep 29.${process.pid}${Date.now() % 1000}`
    llm.enqueue(call('slow', 'bash', { command }))
    const pending = prompt(sessionId, 'wait a long time')
    // The command itself runs (not only the sandbox wrapper that starts it).
    await until(() => processesRunning(command).includes(command))
    await agent.agent.notify('session/cancel', { sessionId })
    expect((await pending).stopReason).toBe('cancelled')
    expect(llm.requests).toHaveLength(1)
    await until(() => processesRunning(command).length === 0)
  })

  test('choosing another model sends the next request to it', async () => {
    const sessionId = await newSession()
    const response = await agent.agent.request('session/set_config_option', {
      sessionId,
      configId: 'model',
      value: 'deepseek/deepseek-v4-pro',
    })
    expect(response.configOptions.find((option) => option.id === 'model')?.currentValue).toBe(
      'deepseek/deepseek-v4-pro',
    )
    llm.enqueue({ text: 'pro here' })
    await prompt(sessionId, 'who are you')
    expect(llm.requests[0]!.body.model).toBe('deepseek-v4-pro')
  })

  test('the agent preset option, chosen before the first prompt, narrows the tools the request carries; after it, it is refused', async () => {
    const sessionId = await newSession()
    const response = await agent.agent.request('session/set_config_option', {
      sessionId,
      configId: 'agent_preset',
      value: 'explore',
    })
    expect(response.configOptions.find((option) => option.id === 'agent_preset')).toMatchObject({
      currentValue: 'explore',
      name: 'Agent preset',
    })
    llm.enqueue({ text: 'looked' })
    await prompt(sessionId, 'look around')
    const tools = llm.requests[0]!.body.tools.map((tool: { function: { name: string } }) => tool.function.name)
    expect(tools).toContain('read')
    expect(
      tools.filter((name: string) => ['bash', 'write', 'edit', 'str_replace_editor', 'task'].includes(name)),
    ).toEqual([])
    const error = await rpcError(
      agent.agent.request('session/set_config_option', { sessionId, configId: 'agent_preset', value: 'standard' }),
    )
    expect(error).toMatchObject({ message: expect.stringContaining('has already run a turn') })
  })

  test('an unknown model is refused with the models that exist', async () => {
    const sessionId = await newSession()
    const error = await rpcError(
      agent.agent.request('session/set_config_option', { sessionId, configId: 'model', value: 'deepseek/nope' }),
    )
    expect(error).toMatchObject({ code: -32602, message: expect.stringContaining('deepseek/deepseek-v4-flash') })
  })

  test('session/list names the sessions of a directory, newest first', async () => {
    const sessionId = await newSession()
    llm.enqueue({ text: 'listed' })
    await prompt(sessionId, 'remember this prompt')
    const { sessions } = await agent.agent.request('session/list', { cwd: agent.workspace })
    expect(sessions[0]).toMatchObject({
      sessionId,
      cwd: agent.workspace,
      title: expect.stringContaining('remember this prompt'),
    })
  })
})

describe('session modes', () => {
  test('a session starts in the workspace-write preset and offers the three presets and plan mode as modes', async () => {
    const response = await agent.agent.request('session/new', { cwd: agent.workspace, mcpServers: [] })
    expect(response.modes?.currentModeId).toBe('workspace-write')
    expect(response.modes?.availableModes.map((mode) => mode.id)).toEqual([
      'read-only',
      'workspace-write',
      'danger-full-access',
      'plan',
    ])
  })

  test('set_mode to read-only makes the next write fail and leaves the file absent', async () => {
    const sessionId = await newSession()
    await agent.agent.request('session/set_mode', { sessionId, modeId: 'read-only' })
    llm.enqueue(call('ro', 'write', { path: 'blocked.txt', content: 'nope' }), { text: 'ok' })
    await prompt(sessionId, 'try to write')
    expect(existsSync(join(agent.workspace, 'blocked.txt'))).toBe(false)
    expect(
      of(agent.updates(sessionId), 'tool_call_update')
        .filter((u) => u.toolCallId === 'ro')
        .at(-1)?.status,
    ).toBe('failed')
    const update = of(agent.updates(sessionId), 'config_option_update')[0]!
    expect(update.configOptions.find((option) => option.id === 'mode')?.currentValue).toBe('read-only')
  })

  test('an unknown mode is refused with the modes that exist', async () => {
    const sessionId = await newSession()
    const error = await rpcError(agent.agent.request('session/set_mode', { sessionId, modeId: 'yolo' }))
    expect(error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('read-only, workspace-write, danger-full-access'),
    })
  })
})

describe('a stored session', () => {
  test('session/load replays the conversation as updates, then the session continues with its history', async () => {
    const first = await startAgent({ patch: PATCH, env: { DEEPSEEK_BASE_URL: llm.url, DEEPSEEK_API_KEY: KEY } })
    let second: AgentProcess | undefined
    try {
      const { sessionId } = await first.agent.request('session/new', { cwd: first.workspace, mcpServers: [] })
      llm.enqueue(
        {
          reasoning: 'Simple.',
          toolCalls: [{ id: 'n1', name: 'write', arguments: { path: 'answer.txt', content: '4\n' } }],
        },
        { text: 'Four.' },
      )
      await first.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'What is 2+2?' }] })
      expect(await first.stop()).toBe(0)

      second = await startAgent({
        patch: PATCH,
        env: { DEEPSEEK_BASE_URL: llm.url, DEEPSEEK_API_KEY: KEY },
        home: first.home,
        workspace: first.workspace,
      })
      const loaded = await second.agent.request('session/load', { sessionId, cwd: first.workspace, mcpServers: [] })
      expect(loaded.modes?.currentModeId).toBe('workspace-write')
      const replayed = second.updates(sessionId)
      // Each answered request is a usage_update (@dsh/usage-kit), on replay too.
      expect(replayed.map((u) => u.sessionUpdate)).toEqual([
        'user_message_chunk',
        'agent_thought_chunk',
        'usage_update',
        'tool_call',
        'tool_call_update',
        'tool_call_update',
        'agent_message_chunk',
        'usage_update',
      ])
      expect(textOf(replayed, 'user_message_chunk')).toBe('What is 2+2?')
      expect(of(replayed, 'tool_call')[0]).toMatchObject({ toolCallId: 'n1', kind: 'edit', title: 'write answer.txt' })
      expect(of(replayed, 'tool_call_update').at(-1)).toMatchObject({ toolCallId: 'n1', status: 'completed' })
      expect(textOf(replayed, 'agent_message_chunk')).toBe('Four.')

      llm.enqueue({ text: 'Five.' })
      await second.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'And 2+3?' }] })
      const history = llm.requests.at(-1)!.body.messages.filter((m: { role: string }) => m.role !== 'system')
      // The first user message is the runtime context (@dsh/runtime-context), logged before the first prompt.
      expect(history.map((m: { role: string }) => m.role)).toEqual([
        'user',
        'user',
        'assistant',
        'tool',
        'assistant',
        'user',
      ])
      expect(history[0].content).toMatch(/^Runtime context/)
      expect(history.at(-2)).toMatchObject({ role: 'assistant', content: 'Four.' })
      expect(history.at(-1)).toMatchObject({ role: 'user', content: 'And 2+3?' })
    } finally {
      await second?.dispose()
      await first.dispose()
    }
  })

  test('loading a session that does not exist is a resource-not-found error', async () => {
    const error = await rpcError(
      agent.agent.request('session/load', { sessionId: 'no-such-session', cwd: agent.workspace, mcpServers: [] }),
    )
    expect(error).toMatchObject({ code: -32002 })
  })
})

describe('the connection', () => {
  test("without the route's key, initialize offers the key as an auth method and session/new asks for it", async () => {
    // Spawned: its environment lacks the key the in-process agent of this file has (in-process launches share one).
    const keyless = await startAgent({ patch: PATCH, env: { DEEPSEEK_BASE_URL: llm.url }, process: true })
    try {
      expect(keyless.initialized.authMethods?.map((method) => method.id)).toContain('DEEPSEEK_API_KEY')
      const error = await rpcError(keyless.agent.request('session/new', { cwd: keyless.workspace, mcpServers: [] }))
      expect(error).toMatchObject({ code: -32000, message: expect.stringContaining('DEEPSEEK_API_KEY') })
      const auth = await rpcError(keyless.agent.request('authenticate', { methodId: 'DEEPSEEK_API_KEY' }))
      expect(auth).toMatchObject({ code: -32000, message: expect.stringContaining('still not set') })
    } finally {
      await keyless.dispose()
    }
  })

  test('the process exits 0 when the editor closes its stdin', async () => {
    const short = await startAgent({
      patch: PATCH,
      env: { DEEPSEEK_BASE_URL: llm.url, DEEPSEEK_API_KEY: KEY },
      process: true,
    })
    try {
      expect(await short.stop()).toBe(0)
    } finally {
      await short.dispose()
    }
  })
})
