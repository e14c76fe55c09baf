import { existsSync } from 'node:fs'
import { createServer } from 'node:http'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest'
import type { SessionUpdate } from '@agentclientprotocol/sdk'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import { startAgent, type AgentProcess } from '@dsh/acp/test-support'

// An editor that offers terminals: `bash` runs in them (bundle-acp mounts @dsh/shell-acp as the shell row),
// confined by the sandbox before the editor is asked, and the tool call shows the terminal.
let llm: MockServer
let editor: AgentProcess

beforeAll(async () => {
  llm = await startMockServer()
  editor = await startAgent({
    patch: '[]',
    env: { DEEPSEEK_BASE_URL: llm.url, DEEPSEEK_API_KEY: 'test-key-0123456789' },
    capabilities: { terminal: true },
  })
})
afterAll(async () => {
  await editor?.dispose()
  await llm?.close()
})
afterEach(() => llm.reset())

const call = (id: string, args: Record<string, unknown>) => ({ toolCalls: [{ id, name: 'bash', arguments: args }] })
const newSession = async () =>
  (await editor.agent.request('session/new', { cwd: editor.workspace, mcpServers: [] })).sessionId
const prompt = (sessionId: string, text: string) =>
  editor.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] })
const updatesOf = (sessionId: string, callId: string) =>
  editor
    .updates(sessionId)
    .filter(
      (u): u is Extract<SessionUpdate, { sessionUpdate: 'tool_call_update' }> =>
        u.sessionUpdate === 'tool_call_update' && u.toolCallId === callId,
    )

test("a command runs in the editor's terminal, the call shows it, and the model reads its output", async () => {
  const sessionId = await newSession()
  const before = editor.terminals.length
  llm.enqueue(call('t1', { command: 'echo from-the-editor-terminal' }), { text: 'done' })
  await prompt(sessionId, 'run it there')
  const created = editor.terminals[before]!
  expect([created.command, ...created.args].join(' ')).toContain('echo from-the-editor-terminal')
  expect(created.released).toBe(true)
  const shown = updatesOf(sessionId, 't1').map((u) => u.content ?? [])
  expect(shown.some((content) => content.some((c) => c.type === 'terminal'))).toBe(true)
  expect(updatesOf(sessionId, 't1').at(-1)).toMatchObject({
    status: 'completed',
    content: [{ type: 'terminal', terminalId: expect.any(String) }],
  })
  expect(JSON.stringify(llm.requests[1]!.body.messages.at(-1))).toContain('from-the-editor-terminal')
})

test('the editor runs the command confined by the sandbox: a write outside the workspace never reaches the disk', async () => {
  const sessionId = await newSession()
  const before = editor.terminals.length
  const outside = join('/tmp', `dsh-acp-escape-${process.pid}-${Date.now()}`)
  llm.enqueue(call('t2', { command: `touch ${outside}` }), { text: 'done' })
  await prompt(sessionId, 'escape')
  // bwrap runs the command, possibly under the wrappers that tidy fence folders and join cgroups (sandbox-local).
  const { command, args } = editor.terminals[before]!
  expect([command, ...args].some((arg) => /(^|\/)bwrap$/.test(arg))).toBe(true)
  expect(existsSync(outside)).toBe(false)
})

test("the editor runs the command without the host network: loopback is refused by dsh's proxy and the server sees nothing", async () => {
  let connections = 0
  const server = createServer((_req, res) => res.end('secret service\n')).on('connection', () => void connections++)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  try {
    const sessionId = await newSession()
    llm.enqueue(
      call('t4', {
        command: `curl -sS --max-time 10 http://127.0.0.1:${port}/; curl -sS --max-time 5 --noproxy '*' http://127.0.0.1:${port}/`,
      }),
      { text: 'done' },
    )
    await prompt(sessionId, 'reach the host')
    const seen = JSON.stringify(llm.requests[1]!.body.messages.at(-1))
    expect(seen).toContain('dsh: network not allowed: 127.0.0.1 (')
    expect(seen).toContain("Couldn't connect to server")
    expect(seen).not.toContain('secret service')
    expect(connections).toBe(0)
  } finally {
    server.close()
  }
})

test("cancel kills the command in the editor's terminal", async () => {
  const sessionId = await newSession()
  const before = editor.terminals.length
  llm.enqueue(call('t3', { command: 'sleep 30' }))
  const pending = prompt(sessionId, 'wait')
  await editor.waitForUpdate(
    sessionId,
    (u) =>
      u.sessionUpdate === 'tool_call_update' &&
      u.toolCallId === 't3' &&
      !!u.content?.some((c) => c.type === 'terminal'),
  )
  await editor.agent.notify('session/cancel', { sessionId })
  expect((await pending).stopReason).toBe('cancelled')
  expect(editor.terminals[before]).toMatchObject({ killed: true, released: true })
})

test("the editor starts the command with exactly the scrubbed environment: neither dsh's nor the editor's keys reach it", async () => {
  // The editor's own environment (this process's) holds a key; dsh's holds DEEPSEEK_API_KEY.
  process.env.EDITOR_SIDE_TOKEN = 'editor-side-token-0123456789'
  try {
    const sessionId = await newSession()
    const before = editor.terminals.length
    llm.enqueue(call('t4', { command: 'env' }), { text: 'done' })
    await prompt(sessionId, 'show the environment')
    const created = editor.terminals[before]!
    expect(created.command).toBe('/usr/bin/env')
    expect(created.args.slice(0, 2)).toEqual(['-i', '--'])
    expect(created.args).toContain('PAGER=cat')
    const sent = JSON.stringify(created)
    expect(sent).not.toContain('DEEPSEEK_API_KEY')
    expect(sent).not.toContain('test-key-0123456789')
    const seen = JSON.stringify(llm.requests[1]!.body.messages.at(-1))
    expect(seen).toContain('PAGER=cat')
    for (const text of ['EDITOR_SIDE_TOKEN', 'editor-side-token-0123456789', 'DEEPSEEK_API_KEY', 'test-key-0123456789'])
      expect(seen).not.toContain(text)
  } finally {
    delete process.env.EDITOR_SIDE_TOKEN
  }
})
