// `dsh mcp add | remove | test` through the real launcher (in-process: test-support/dsh.ts); one world for the file.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { parse } from 'yaml'
import { dsh, makeWorld, storedEvents, type World } from './test-support/dsh.ts'

const SERVER = fileURLToPath(new URL('../../../mcp/mcp-client/src/fixtures/test-server.mjs', import.meta.url))

let world: World
beforeAll(async () => {
  world = await makeWorld()
})
afterAll(async () => {
  await world.dispose()
})

test('dsh mcp add writes mcp.yaml keeping its comments, test starts the server with timings and its tools, remove takes it out', async () => {
  const file = join(world.home, 'mcp.yaml')
  writeFileSync(file, '# my servers, by hand\nmcpServers:\n  # the old one\n  old: { command: /bin/true }\n')
  const added = await dsh(world, [
    'mcp',
    'add',
    'probe',
    '--trust',
    'allow',
    '--env',
    'GREETING=hi',
    '--',
    process.execPath,
    SERVER,
    '--marker',
    'x',
  ])
  expect(added).toMatchObject({
    code: 0,
    stdout: `added MCP server "probe" to ${file} (dsh mcp test probe starts it once)\n`,
  })
  const text = readFileSync(file, 'utf8')
  expect(text).toContain('# my servers, by hand')
  expect(text).toContain('# the old one')
  expect(parse(text).mcpServers).toEqual({
    old: { command: '/bin/true' },
    probe: { command: process.execPath, args: [SERVER, '--marker', 'x'], env: { GREETING: 'hi' }, trust: 'allow' },
  })

  const tested = await dsh(world, ['mcp', 'test', 'probe', '--json'])
  expect(tested.code).toBe(0)
  const probe = JSON.parse(tested.stdout)
  expect(probe).toMatchObject({ server: 'probe', origin: 'user', transport: 'stdio', ok: true })
  expect(probe.tools).toContainEqual({ tool: 'echo', description: 'Echoes the text back.' })
  for (const timing of [probe.startMs, probe.listMs, probe.stopMs]) expect(timing).toBeGreaterThanOrEqual(0)
  // The session it used is the record of what ran: started, then stopped.
  expect(
    storedEvents(world, probe.sessionId)
      .filter((event) => event.type === 'mcp/status')
      .map((event) => event.data.state),
  ).toEqual(['started', 'stopped'])

  expect(await dsh(world, ['mcp', 'remove', 'probe'])).toMatchObject({
    code: 0,
    stdout: `removed MCP server "probe" from ${file}\n`,
  })
  const after = readFileSync(file, 'utf8')
  expect(after).not.toContain('probe')
  expect(after).toContain('# the old one')
}, 90_000)

test('mistakes exit 2 naming what is wrong; a server that cannot start makes mcp test exit 1 naming it', async () => {
  const bad = await dsh(world, ['mcp', 'add', 'bad', '--trust', 'sometimes', '--', process.execPath])
  expect(bad.code).toBe(2)
  expect(bad.stderr).toContain('MCP server "bad": trust must be ask or allow')
  const unknown = await dsh(world, ['mcp', 'remove', 'ghost'])
  expect(unknown.code).toBe(2)
  expect(unknown.stderr).toMatch(/no MCP server named "ghost" \(configured: /)

  writeFileSync(
    join(world.home, 'mcp.yaml'),
    `mcpServers:\n  broken: { command: ${join(world.repo, 'no-such-program')}, trust: allow, sandbox: false }\n`,
  )
  const failed = await dsh(world, ['mcp', 'test', 'broken'])
  expect(failed.code).toBe(1)
  expect(failed.stdout).toMatch(/^MCP server "broken" \(user, stdio\): did not start after \d+ ms: MCP server "broken"/)
}, 90_000)
