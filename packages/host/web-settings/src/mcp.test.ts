import { symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { bootComposition, type Harness } from '@dsh/test-harness'
import { eventually, outsideDir } from '@dsh/test-harness/world'
import { signInWithLink } from '@dsh/webserver'

const SERVER = fileURLToPath(new URL('../../../mcp/mcp-client/src/fixtures/test-server.mjs', import.meta.url))

let h: Harness
let cookie: string
beforeAll(async () => {
  h = await bootComposition({
    profile: 'web',
    argv: ['--port', '0'],
    patch: `- id: webserver\n  config: { announce: false, open: false }\n`,
    homeFiles: {
      'mcp.yaml': `mcpServers:\n  t: { command: ${process.execPath}, args: [${JSON.stringify(SERVER)}], env: { HIDDEN: value-never-shown }, trust: allow, start: eager }\n`,
    },
    workspaceFiles: {
      '.mcp.json': JSON.stringify({
        mcpServers: { repo: { command: 'npx', args: ['some-server'], env: { TOKEN: 'repo-secret-never-shown' } } },
      }),
    },
  })
  await h.root.webserver.start()
  cookie = await signInWithLink(h.root.webserver.newLink())
})
afterAll(() => h?.dispose())

async function call(method: string, params: unknown = {}) {
  const response = await fetch(`${h.root.webserver.url}/api/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie },
    body: JSON.stringify(params),
  })
  return { text: await response.clone().text(), ...((await response.json()) as any) }
}

test('mcp.servers shows the servers of a workspace with origin, state and tools as the session log records them, never a config value', async () => {
  const configured = await call('mcp.servers', { cwd: h.workspace })
  expect((await call('mcp.servers', {})).ok).toBe(true)
  expect(
    configured.result.servers.map(
      (server: { name: string; origin: string; state: string }) => `${server.name} ${server.origin} ${server.state}`,
    ),
  ).toEqual(['t user not started', 'repo workspace not started'])

  const agent = await h.agent()
  expect(
    await eventually(() => agent.session.all('mcp/status').some((event) => event.data.state === 'started'), 30_000),
  ).toBe(true)
  const live = await call('mcp.servers', { cwd: h.workspace, sessionId: agent.session.id })
  const t = live.result.servers.find((server: { name: string }) => server.name === 't')
  expect(t).toMatchObject({ origin: 'user', transport: 'stdio', trust: 'allow', state: 'started' })
  expect(t.tools).toContainEqual({ name: 'mcp__t__echo', description: 'Echoes the text back.' })
  expect(live.text + configured.text).not.toMatch(/value-never-shown|repo-secret-never-shown|some-server/)

  expect((await call('mcp.servers', { cwd: 'relative' })).error.code).toBe('BAD_PARAMS')
  expect((await call('mcp.servers', { cwd: h.workspace, sessionId: 'nope' })).error.code).toBe('NOT_FOUND')
})

test('attack: mcp.servers for a folder outside the openable folders (named, or through a link inside one) is refused before its .mcp.json is read', async () => {
  const outside = outsideDir()
  writeFileSync(
    join(outside, '.mcp.json'),
    JSON.stringify({
      mcpServers: { 'outside-server-name': { command: 'outside-command-never-read', env: { K: 'outside-value' } } },
    }),
  )
  const link = join(h.workspace, 'to-outside')
  symlinkSync(outside, link)
  for (const cwd of [outside, link]) {
    const answer = await call('mcp.servers', { cwd })
    expect(answer.error).toMatchObject({
      code: 'BAD_PARAMS',
      message: expect.stringContaining('is outside the folders the web app may open'),
    })
    expect(answer.text).not.toMatch(/outside-server-name|outside-command-never-read|outside-value/)
  }
  expect((await call('mcp.servers', { cwd: join(h.workspace, 'missing') })).error).toMatchObject({
    code: 'BAD_PARAMS',
    message: expect.stringContaining('is not an existing directory'),
  })
})
