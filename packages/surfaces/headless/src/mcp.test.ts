// The real launcher (in-process: test-support/dsh.ts) with `--mcp-config` and `dsh mcp list`; only the model is fake.
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { dsh, makeWorld, storedEvents, storedSessionIds, type World } from './test-support/dsh.ts'

const SERVER = fileURLToPath(new URL('../../../mcp/mcp-client/src/fixtures/test-server.mjs', import.meta.url))

let world: World
beforeEach(async () => {
  world = await makeWorld()
})
afterEach(async () => {
  await world.dispose()
})

test('--mcp-config gives the run an MCP server whose tool the scripted model calls; --approve answers its call', async () => {
  world.write('servers.json', JSON.stringify({ mcpServers: { cli: { command: process.execPath, args: [SERVER] } } }))
  world.llm.enqueue(
    { toolCalls: [{ id: 'm1', name: 'mcp__cli__echo', arguments: { text: 'headless' } }] },
    { text: 'Echoed.' },
  )
  const { code, stdout } = await dsh(world, ['--approve', '--mcp-config', 'servers.json', 'echo something'])
  expect({ code, stdout }).toEqual({ code: 0, stdout: 'Echoed.\n' })
  expect(JSON.stringify(world.llm.requests[1]!.body.messages.at(-1))).toContain('echo: headless')
  const events = storedEvents(world, storedSessionIds(world)[0]!)
  expect(events.find((event) => event.type === 'mcp/catalog')).toMatchObject({ data: { server: 'cli', origin: 'cli' } })
})

test('a bad --mcp-config is a usage error naming the file and the server, before any session exists', async () => {
  world.write('servers.json', JSON.stringify({ mcpServers: { cli: { command: '' } } }))
  const { code, stderr } = await dsh(world, ['--mcp-config', 'servers.json', 'task'])
  expect(code).toBe(2)
  expect(stderr).toMatch(/servers\.json: MCP server "cli": command must be a non-empty string/)
  expect(storedSessionIds(world)).toEqual([])
})

test('dsh mcp list shows the user and workspace servers with their origin, never an environment value', async () => {
  world.write(
    '.mcp.json',
    JSON.stringify({
      mcpServers: { repo: { command: 'npx', args: ['-y', 'some-server'], env: { API_TOKEN: 'literal-secret-value' } } },
    }),
  )
  writeFileSync(
    `${world.home}/mcp.yaml`,
    `mcpServers:\n  mine: { command: ${process.execPath}, args: [${JSON.stringify(SERVER)}], trust: allow }\n`,
  )
  const text = await dsh(world, ['mcp', 'list'])
  expect(text.code).toBe(0)
  expect(text.stdout).toContain(`mine  user (${world.home}/mcp.yaml)  ${process.execPath} ${SERVER}  [trust allow]`)
  expect(text.stdout).toContain(
    `repo  workspace (${world.repo}/.mcp.json)  npx -y some-server  [trust ask, starts once approved]`,
  )
  const json = await dsh(world, ['mcp', 'list', '--json'])
  const rows = json.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line))
  expect(rows.map((row) => [row.name, row.origin])).toEqual([
    ['mine', 'user'],
    ['repo', 'workspace'],
  ])
  expect(rows[1].env).toEqual(['API_TOKEN'])
  expect(json.stdout + text.stdout).not.toContain('literal-secret-value')
})
