import { randomUUID } from 'node:crypto'
import { expect, test } from 'vitest'
import { toolCall } from '@dsh/test-harness'
import { eventually, processesWith } from '@dsh/test-harness/world'
import { boot, SERVER } from './fixtures/boot.ts'

const server = (name: string, marker: string, extra = '') =>
  `  ${name}: { command: ${process.execPath}, args: [${JSON.stringify(SERVER)}, --marker, ${marker}], trust: allow${extra} }\n`

test('start: eager starts a server when the session starts, before any turn; a lazy one waits for the first step', async () => {
  const eager = randomUUID()
  const lazy = randomUUID()
  const h = await boot([toolCall('call', 'mcp__e__echo', { text: 'ready' }), { text: 'done' }], {
    homeFiles: { 'mcp.yaml': `mcpServers:\n${server('e', eager, ', start: eager')}${server('l', lazy)}` },
  })
  await h.agent()
  expect(
    await eventually(
      () => h.events('mcp/status').some((event) => event.data.server === 'e' && event.data.state === 'started'),
      30_000,
    ),
  ).toBe(true)
  expect(h.events('request/header')).toEqual([])
  expect(processesWith(eager).length).toBeGreaterThan(0)
  expect(processesWith(lazy)).toEqual([])
  expect(h.events('mcp/status').map((event) => event.data.server)).toEqual(['e'])

  await h.run('go')
  expect(h.toolText('call')).toBe('echo: ready')
  // Each started once: the eager one was not started again at the first step.
  expect(h.events('mcp/status').map((event) => `${event.data.server} ${event.data.state}`)).toEqual([
    'e started',
    'l started',
  ])
  expect(processesWith(lazy).length).toBeGreaterThan(0)
})

test('the mcp.start setting makes every server without its own start eager; a server saying start: lazy still waits', async () => {
  const eager = randomUUID()
  const lazy = randomUUID()
  const h = await boot([{ text: 'done' }], {
    homeFiles: { 'mcp.yaml': `mcpServers:\n${server('e', eager)}${server('l', lazy, ', start: lazy')}` },
    settings: 'mcp.start: eager\n',
  })
  await h.agent()
  expect(
    await eventually(
      () => h.events('mcp/status').some((event) => event.data.server === 'e' && event.data.state === 'started'),
      30_000,
    ),
  ).toBe(true)
  expect(processesWith(lazy)).toEqual([])
  await h.run('go')
  expect(h.events('mcp/status').map((event) => `${event.data.server} ${event.data.state}`)).toEqual([
    'e started',
    'l started',
  ])
})

test('a start value other than eager or lazy is an error naming the file, the server and the key', async () => {
  const h = await boot([{ text: 'done' }], {
    homeFiles: { 'mcp.yaml': `mcpServers:\n${server('e', 'x', ', start: soon')}` },
  })
  await expect(h.root.mcp.configured(h.workspace)).rejects.toThrow(
    /mcp\.yaml: MCP server "e": start must be eager or lazy/,
  )
})
