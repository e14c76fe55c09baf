import { join } from 'node:path'
import { expect, test } from 'vitest'
import { toolCall, type Harness } from '@dsh/test-harness'
import { answering, boot, SERVER, userFile } from './fixtures/boot.ts'

const toolNames = (h: Harness) =>
  h
    .events('request/header')
    .at(-1)!
    .data.tools.map((tool: { name: string }) => tool.name)

test('mcp_resource lists a server resources and reads text, an image (as an attachment), a binary (as a note) and a large text (spilled)', async () => {
  const h = await boot(
    [
      toolCall('list', 'mcp_resource', { server: 't' }),
      toolCall('text', 'mcp_resource', { server: 't', uri: 'mem://docs/readme' }),
      toolCall('image', 'mcp_resource', { server: 't', uri: 'mem://img/dot.png' }),
      toolCall('binary', 'mcp_resource', { server: 't', uri: 'mem://bin/archive' }),
      toolCall('big', 'mcp_resource', { server: 't', uri: 'mem://logs/big' }),
      toolCall('missing', 'mcp_resource', { server: 't', uri: 'mem://nowhere' }),
      toolCall('other', 'mcp_resource', { server: 'nobody' }),
      { text: 'done' },
    ],
    { homeFiles: { 'mcp.yaml': userFile('trust: allow') } },
  )
  await h.run('read the resources')
  const header = h
    .events('request/header')[0]!
    .data.tools.find((tool: { name: string }) => tool.name === 'mcp_resource')!
  expect((header.parameters as { properties: { server: { enum: string[] } } }).properties.server.enum).toEqual(['t'])
  expect(h.toolText('list')).toContain('mem://docs/readme — readme (text/markdown: The readme.)')
  expect(h.toolText('list')).toContain('mem://img/dot.png — dot (image/png)')
  expect(h.toolText('text')).toBe('[resource mem://docs/readme (text/markdown)]\n# Readme\nhello from a resource')
  const image = h.toolResult('image').content[0] as { type: string; mediaType?: string; sha256?: string }
  expect(image).toMatchObject({ type: 'image', mediaType: 'image/png' })
  expect(image.sha256).toMatch(/^[0-9a-f]{64}$/)
  expect(h.toolText('binary')).toBe('[resource mem://bin/archive (application/zip, 6 bytes, not shown)]')
  expect(h.toolText('big')).toContain(join(h.home, 'spill'))
  expect(h.toolResult('missing').error?.code).toBe('MCP_SERVER_FAILED')
  expect(h.toolResult('missing').error?.message).toContain('MCP server "t" failed reading mem://nowhere')
  expect(h.toolResult('other').error?.code).toBe('INVALID_ARGS')
})

test('trust: ask makes a resource read an approval offering mcp(server/@resources); a rejection never reads it; "always" answers the next', async () => {
  const h = await boot(
    [
      toolCall('no', 'mcp_resource', { server: 't', uri: 'mem://docs/readme' }),
      toolCall('yes', 'mcp_resource', { server: 't' }),
      toolCall('again', 'mcp_resource', { server: 't', uri: 'mem://docs/readme' }),
      { text: 'done' },
    ],
    { homeFiles: { 'mcp.yaml': userFile() } },
  )
  let first = true
  const asked = answering(h, () => (first ? ((first = false), 'reject') : 'allow_always'))
  await h.run('go')
  expect(h.toolResult('no').error?.code).toBe('APPROVAL_REJECTED')
  expect(h.toolText('yes')).toContain('mem://docs/readme')
  expect(h.toolText('again')).toContain('hello from a resource')
  expect(asked.map((request) => request.rule)).toEqual(['mcp(t/@resources)', 'mcp(t/@resources)'])
})

test('a permissions.deny mcp(server/*) rule refuses resource reads too', async () => {
  const h = await boot(
    [toolCall('denied', 'mcp_resource', { server: 't', uri: 'mem://docs/readme' }), { text: 'done' }],
    {
      homeFiles: { 'mcp.yaml': userFile('trust: allow') },
      settings: 'permissions.deny: ["mcp(t/*)"]\n',
    },
  )
  await h.run('go')
  expect(h.toolResult('denied').error?.code).toBe('DENIED')
})

test('no server offers resources: no mcp_resource tool is offered', async () => {
  const h = await boot([{ text: 'done' }], {
    homeFiles: {
      'mcp.yaml': `mcpServers:\n  t: { command: ${process.execPath}, args: [${JSON.stringify(SERVER)}, --no-resources], trust: allow }\n`,
    },
  })
  await h.run('go')
  expect(toolNames(h)).toContain('mcp__t__echo')
  expect(toolNames(h)).not.toContain('mcp_resource')
})
