import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import { toolCall } from '@dsh/test-harness'
import { boot } from './fixtures/boot.ts'
import { remoteServer } from './fixtures/remote-server.ts'

const TOKEN = 'remote-bearer-value-9f8e7d'

test('streamable HTTP and legacy SSE servers: headers get ${VAR} expanded, the bearer token reaches the server and no log line', async () => {
  process.env.DSH_TEST_REMOTE_BEARER = TOKEN
  process.env.DSH_TEST_TEAM = 'team-value'
  onTestFinished(() => {
    delete process.env.DSH_TEST_REMOTE_BEARER
    delete process.env.DSH_TEST_TEAM
  })
  const remote = await remoteServer()
  const entry = (transport: string, path: string) =>
    `{ type: ${transport}, url: "${remote.url}${path}", headers: { X-Team: "\${DSH_TEST_TEAM}" }, bearer_token_env_var: DSH_TEST_REMOTE_BEARER, trust: allow }`
  const h = await boot(
    [toolCall('http', 'mcp__web__hello', {}), toolCall('sse', 'mcp__old__hello', {}), { text: 'done' }],
    {
      homeFiles: { 'mcp.yaml': `mcpServers:\n  web: ${entry('http', '/mcp')}\n  old: ${entry('sse', '/sse')}\n` },
      settings: 'network.allow: ["127.0.0.1"]\n',
    },
  )
  await h.run('go')
  expect(h.toolText('http')).toBe('hello over the network')
  expect(h.toolText('sse')).toBe('hello over the network')
  expect(remote.seen.length).toBeGreaterThan(2)
  expect(
    remote.seen.every((request) => request.authorization === `Bearer ${TOKEN}` && request.team === 'team-value'),
  ).toBe(true)
  await (await h.agent()).session.flush()
  const logs = readdirSync(h.home, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.jsonl') || file.endsWith('.json') || file.endsWith('.yaml'))
    .map((file) => readFileSync(join(h.home, file), 'utf8'))
    .join('\n')
  expect(logs).toContain('mcp__web__hello')
  expect(logs).not.toContain(TOKEN)
  expect(logs).not.toContain('team-value')
})

test('attack: a remote MCP URL the network rules do not allow gets no connection; the refusal names the server and is logged', async () => {
  const remote = await remoteServer()
  const h = await boot([toolCall('http', 'mcp__web__hello', {}), { text: 'done' }], {
    homeFiles: {
      'mcp.yaml': `mcpServers:\n  web: { type: http, url: "${remote.url}/mcp", trust: allow }\n  old: { type: sse, url: "${remote.url}/sse", trust: allow }\n`,
    },
  })
  await h.run('go')
  expect(remote.seen).toEqual([])
  expect(h.toolResult('http').error?.code).toBe('UNKNOWN_TOOL')
  const failed = h.events('mcp/status').map((event) => event.data)
  expect(failed.map((status) => `${status.server} ${status.state}`).sort()).toEqual(['old failed', 'web failed'])
  expect(
    failed.every((status) =>
      /MCP server "(web|old)" failed to initialize: .*Proxy response \(403\)/.test(status.message ?? ''),
    ),
  ).toBe(true)
  expect(h.events('network/decision').map((event) => `${event.data.host} ${event.data.decision}`)).toContain(
    '127.0.0.1 refused',
  )
})

test('network.deny refuses a remote MCP server even when network.allow names it; an allowed one is reached through the proxy (logged)', async () => {
  const remote = await remoteServer()
  const h = await boot([toolCall('http', 'mcp__web__hello', {}), { text: 'done' }], {
    homeFiles: {
      'mcp.yaml': `mcpServers:\n  web: { type: http, url: "${remote.url}/mcp", trust: allow }\n  bad: { type: http, url: "http://localhost:${new URL(remote.url).port}/mcp", trust: allow }\n`,
    },
    settings: 'network.allow: ["127.0.0.1", "localhost"]\nnetwork.deny: ["localhost"]\n',
  })
  await h.run('go')
  expect(h.toolText('http')).toBe('hello over the network')
  const decisions = h.events('network/decision').map((event) => `${event.data.host} ${event.data.decision}`)
  expect(decisions).toContain('127.0.0.1 allowed')
  expect(decisions).toContain('localhost refused')
  expect(h.events('mcp/status').find((event) => event.data.server === 'bad')!.data.state).toBe('failed')
})
