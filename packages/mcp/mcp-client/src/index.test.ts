import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import { toolCall, type Harness } from '@dsh/test-harness'
import { tempDir } from '@dsh/test-harness/world'
import { answering, boot, userFile } from './fixtures/boot.ts'

const lastTools = (h: Harness) =>
  h
    .events('request/header')
    .at(-1)!
    .data.tools.map((tool: { name: string }) => tool.name)

test('a scripted model calls an MCP tool of a user server: the tool is listed with its schema, the call is validated and its result logged', async () => {
  const h = await boot(
    [toolCall('ok', 'mcp__t__echo', { text: 'hi' }), toolCall('bad', 'mcp__t__echo', { text: 42 }), { text: 'done' }],
    { homeFiles: { 'mcp.yaml': userFile('trust: allow') } },
  )
  await h.run('use the server')
  expect(h.toolText('ok')).toBe('echo: hi')
  expect(h.toolResult('bad').error?.code).toBe('INVALID_ARGS')
  const header = h.events('request/header')[0]!.data
  const echo = header.tools.find((tool: { name: string }) => tool.name === 'mcp__t__echo')!
  expect(echo.description).toBe('Echoes the text back. (MCP server "t")')
  expect(echo.parameters).toMatchObject({
    type: 'object',
    properties: { text: { type: 'string' } },
    required: ['text'],
  })
  expect(h.events('mcp/catalog')[0]!.data).toMatchObject({ server: 't', origin: 'user', reason: 'connected' })
  expect(h.events('mcp/catalog')[0]!.data.tools.map((tool) => tool.name)).toContain('mcp__t__echo')
  expect(h.events('mcp/status').map((event) => event.data.state)).toEqual(['started'])
  expect(h.events('approval/asked')).toEqual([])
})

test('trust: ask makes every call an approval offering mcp(server/tool); a rejected call never reaches the server; "always" answers later calls', async () => {
  const dir = tempDir()
  const target = join(dir, 'written.txt')
  const h = await boot(
    [
      toolCall('no', 'mcp__t__write_file', { path: target, text: 'x' }),
      toolCall('yes', 'mcp__t__echo', { text: 'a' }),
      toolCall('again', 'mcp__t__echo', { text: 'b' }),
      { text: 'done' },
    ],
    { homeFiles: { 'mcp.yaml': userFile() } },
  )
  const asked = answering(h, (request) => (request.summary.startsWith('t/write_file') ? 'reject' : 'allow_always'))
  await h.run('go')
  expect(h.toolResult('no').error?.code).toBe('APPROVAL_REJECTED')
  expect(existsSync(target)).toBe(false)
  expect(h.toolText('yes')).toBe('echo: a')
  expect(h.toolText('again')).toBe('echo: b')
  expect(asked.map((request) => request.rule)).toEqual(['mcp(t/write_file)', 'mcp(t/echo)'])
  expect(readFileSync(join(h.home, 'grants.yaml'), 'utf8')).toContain('mcp(t/echo)')
})

test('a permissions.deny mcp rule refuses the call before the server sees it', async () => {
  const h = await boot([toolCall('denied', 'mcp__t__echo', { text: 'a' }), { text: 'done' }], {
    homeFiles: { 'mcp.yaml': userFile('trust: allow') },
    settings: 'permissions.deny: ["mcp(t/*)"]\n',
  })
  await h.run('go')
  expect(h.toolResult('denied').error?.code).toBe('DENIED')
})

test('attack: a secret in the parent environment is absent from a stdio server; a variable its config names is present', async () => {
  process.env.DSH_TEST_PARENT_API_TOKEN = 'parent-secret-value-123'
  process.env.DSH_TEST_NAMED_API_KEY = 'named-secret-value-456'
  onTestFinished(() => {
    delete process.env.DSH_TEST_PARENT_API_TOKEN
    delete process.env.DSH_TEST_NAMED_API_KEY
  })
  const h = await boot([toolCall('env', 'mcp__t__env', {}), { text: 'done' }], {
    homeFiles: {
      'mcp.yaml': userFile('trust: allow, env: { SERVICE_TOKEN: "${DSH_TEST_NAMED_API_KEY}", PLAIN: value }'),
    },
  })
  await h.run('go')
  const text = h.toolText('env')
  const environment = Object.fromEntries(
    text.split('\n').map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  )
  expect(environment.DSH_TEST_PARENT_API_TOKEN).toBeUndefined()
  expect(text).not.toContain('parent-secret-value-123')
  expect(environment.PLAIN).toBe('value')
  // The named secret reached the server; what the model reads of it is redacted like any secret.
  expect(environment.SERVICE_TOKEN).toBe('«redacted:DSH_TEST_NAMED_API_KEY»')
  await (await h.agent()).session.flush()
  const log = readdirSync(join(h.home, 'sessions'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('session.jsonl'))
    .map((file) => readFileSync(join(h.home, 'sessions', file), 'utf8'))
    .join('')
  expect(log).toContain('mcp__t__env')
  expect(log).not.toContain('parent-secret-value-123')
  expect(log).not.toContain('named-secret-value-456')
})

test('MCP results map to what the model sees: text, the image as an attachment, a resource link, embedded text and binary resources', async () => {
  const h = await boot([toolCall('media', 'mcp__t__media', {}), { text: 'done' }], {
    homeFiles: { 'mcp.yaml': userFile('trust: allow') },
  })
  await h.run('go')
  const content = h.toolResult('media').content
  expect(content[0]).toEqual({ type: 'text', text: 'here' })
  expect(content[1]).toMatchObject({ type: 'image', mediaType: 'image/png' })
  expect((content[1] as { sha256?: string }).sha256).toMatch(/^[0-9a-f]{64}$/)
  expect(content[2]).toEqual({
    type: 'text',
    text: '[resource link] file:///docs/readme.md (readme, text/markdown): the readme',
  })
  expect(content[3]).toEqual({ type: 'text', text: '[resource mem://note (text/plain)]\nembedded note' })
  expect(content[4]).toEqual({
    type: 'text',
    text: '[resource mem://blob (application/octet-stream, 10 bytes, not shown)]',
  })
})

test('an error result is a typed MCP_TOOL_ERROR; a large result is spilled like any output', async () => {
  const h = await boot(
    [toolCall('fail', 'mcp__t__fail', {}), toolCall('big', 'mcp__t__big', { n: 2000 }), { text: 'done' }],
    { homeFiles: { 'mcp.yaml': userFile('trust: allow') } },
  )
  await h.run('go')
  expect(h.toolResult('fail').error).toEqual({ code: 'MCP_TOOL_ERROR', message: 'the thing is broken' })
  expect(h.toolText('big')).toContain(join(h.home, 'spill'))
})

test('a crashed server is a typed tool error naming it, and the next call restarts it', async () => {
  const h = await boot(
    [toolCall('crash', 'mcp__t__crash', {}), toolCall('after', 'mcp__t__echo', { text: 'back' }), { text: 'done' }],
    {
      homeFiles: { 'mcp.yaml': userFile('trust: allow') },
    },
  )
  await h.run('go')
  const crash = h.toolResult('crash').error!
  expect(crash.code).toBe('MCP_SERVER_FAILED')
  expect(crash.message).toContain('MCP server "t" exited')
  expect(crash.message).toContain('about to crash on purpose')
  expect(h.toolText('after')).toBe('echo: back')
  expect(h.events('mcp/status').map((event) => event.data.state)).toEqual(['started', 'crashed'])
  expect(h.events('mcp/catalog').map((event) => event.data.reason)).toEqual(['connected'])
})

test('a server that does not answer initialize in time is a clear error naming it, never a hang; the turn goes on without its tools', async () => {
  const h = await boot([{ text: 'done' }], {
    homeFiles: { 'mcp.yaml': userFile('trust: allow', ['--hang']) },
    mcpConfig: '{ initializeTimeoutMs: 500 }',
  })
  const started = Date.now()
  const result = await h.run('go')
  expect(result.reason).toBe('completed')
  expect(Date.now() - started).toBeLessThan(40_000) // the server never answers
  expect(h.events('mcp/status')[0]!.data).toMatchObject({ server: 't', state: 'failed' })
  expect(h.events('mcp/status')[0]!.data.message).toContain('MCP server "t" did not answer initialize within 500 ms')
  expect(lastTools(h).filter((name: string) => name.startsWith('mcp__'))).toEqual([])
})

test('tools/list_changed updates the catalog: logged as mcp/catalog, and the next request carries the new tool', async () => {
  const h = await boot(
    [toolCall('add', 'mcp__t__add_tool', {}), toolCall('late', 'mcp__t__late', {}), { text: 'done' }],
    { homeFiles: { 'mcp.yaml': userFile('trust: allow') } },
  )
  await h.run('go')
  expect(h.toolText('late')).toBe('late tool ran')
  const catalogs = h.events('mcp/catalog')
  expect(catalogs.map((event) => event.data.reason)).toEqual(['connected', 'list_changed'])
  expect(catalogs[1]!.data.tools.map((tool) => tool.name)).toContain('mcp__t__late')
  expect(h.events('request/header')[0]!.data.tools.map((tool: { name: string }) => tool.name)).not.toContain(
    'mcp__t__late',
  )
  expect(lastTools(h)).toContain('mcp__t__late')
})

test('a slow call past callTimeoutMs is a typed error naming the tool, and the server keeps serving', async () => {
  const h = await boot(
    [
      toolCall('slow', 'mcp__t__slow', { ms: 120_000 }),
      toolCall('after', 'mcp__t__echo', { text: 'still here' }),
      { text: 'done' },
    ],
    {
      homeFiles: { 'mcp.yaml': userFile('trust: allow') },
      mcpConfig: '{ initializeTimeoutMs: 30000, callTimeoutMs: 1500 }',
    },
  )
  const started = Date.now()
  await h.run('go')
  expect(Date.now() - started).toBeLessThan(40_000) // the call would take 120 s
  const error = h.toolResult('slow').error!
  expect(error.code).toBe('MCP_SERVER_FAILED')
  expect(error.message).toMatch(/MCP server "t" failed the call of slow: .*timed out/i)
  expect(h.toolText('after')).toBe('echo: still here')
  expect(h.events('mcp/status').map((event) => event.data.state)).toEqual(['started'])
})

test('/mcp lists the session servers with origin, state and tool count, and never a config value', async () => {
  const h = await boot([{ text: 'done' }], {
    homeFiles: { 'mcp.yaml': userFile('trust: allow, env: { SHOWN_NOWHERE: value-that-must-not-be-listed }') },
  })
  const agent = await h.agent()
  expect(await h.root.commands.run(agent, '/mcp')).toMatchObject({
    output: expect.stringMatching(/^t — user, stdio, trust allow: not started yet$/),
  })
  await h.run('start the servers')
  const listed = String(((await h.root.commands.run(agent, '/mcp')) as { output?: string }).output)
  expect(listed).toMatch(/^t — user, stdio, trust allow: started, \d+ tools$/)
  expect(listed).not.toContain('value-that-must-not-be-listed')
  expect(listed).not.toContain(process.execPath)
})

test('a server that pages its tool list without end is a failed start naming it, never a hang or an endless catalog', async () => {
  const h = await boot([{ text: 'done' }], {
    homeFiles: { 'mcp.yaml': userFile('trust: allow', ['--endless-pages']) },
    mcpConfig: '{ maxListPages: 20, restartBackoffMs: 50 }',
  })
  expect((await h.run('go')).reason).toBe('completed')
  expect(h.events('mcp/status')[0]!.data).toMatchObject({
    server: 't',
    state: 'failed',
    message: expect.stringContaining('MCP server "t" listed more than 20 pages of tools'),
  })
  expect(h.events('mcp/catalog')).toEqual([])
  expect(lastTools(h).filter((name: string) => name.startsWith('mcp__'))).toEqual([])
})
