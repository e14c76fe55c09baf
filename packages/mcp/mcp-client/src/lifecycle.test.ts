import { randomUUID } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { toolCall } from '@dsh/test-harness'
import { eventually, outsideDir, processesWith, tempDir } from '@dsh/test-harness/world'
import { answering, boot, SERVER, userFile } from './fixtures/boot.ts'

const workspaceFile = (marker: string) =>
  JSON.stringify({ mcpServers: { repo: { command: process.execPath, args: [SERVER, '--marker', marker] } } })

test('in a confined mode a stdio server runs under the sandbox: a write outside the workspace fails; sandbox: false lifts it for that server only', async () => {
  const outside = outsideDir()
  const confined = join(outside, 'confined.txt')
  const free = join(outside, 'free.txt')
  const h = await boot(
    [
      toolCall('confined', 'mcp__t__write_file', { path: confined, text: 'x' }),
      toolCall('inside', 'mcp__t__write_file', { path: 'inside.txt', text: 'y' }),
      toolCall('free', 'mcp__u__write_file', { path: free, text: 'z' }),
      { text: 'done' },
    ],
    {
      homeFiles: {
        'mcp.yaml': `${userFile('trust: allow')}  u: { command: ${process.execPath}, args: [${JSON.stringify(SERVER)}], trust: allow, sandbox: false }\n`,
      },
    },
  )
  await h.run('write')
  expect(h.toolResult('confined').error?.code).toBe('MCP_TOOL_ERROR')
  expect(h.toolText('confined')).toMatch(/EROFS|EACCES|ENOENT/)
  expect(existsSync(confined)).toBe(false)
  expect(h.toolText('inside')).toBe('written')
  expect(readFileSync(join(h.workspace, 'inside.txt'), 'utf8')).toBe('y')
  expect(h.toolText('free')).toBe('written')
  expect(readFileSync(free, 'utf8')).toBe('z')
})

test("a workspace .mcp.json server does not start before approval; after 'always in this workspace' it starts in the next session with nobody asked", async () => {
  const home = tempDir('dsh-home-')
  const workspace = tempDir('dsh-ws-')
  const marker = randomUUID()
  const files = { '.mcp.json': workspaceFile(marker) }

  // Nobody can answer: the server is refused, never spawned, and its tools are not offered.
  const refused = await boot([{ text: 'no tools' }], { home, workspace, workspaceFiles: files })
  await refused.run('go')
  expect(refused.events('mcp/status').map((event) => event.data.state)).toEqual(['refused'])
  expect(
    refused
      .events('request/header')[0]!
      .data.tools.map((tool: { name: string }) => tool.name)
      .some((name: string) => name.startsWith('mcp__repo__')),
  ).toBe(false)
  expect(processesWith(marker)).toEqual([])
  await refused.dispose()

  // Rejected by a person: still never spawned.
  const rejected = await boot([{ text: 'no tools' }], { home, workspace })
  const askedFirst = answering(rejected, () => 'reject')
  await rejected.run('go')
  expect(askedFirst).toHaveLength(1)
  expect(askedFirst[0]!.rule).toMatch(/^mcpserver\(repo@[0-9a-f]{16}\)$/)
  expect(askedFirst[0]!.summary).toContain(`start MCP server "repo" from ${join(workspace, '.mcp.json')}`)
  expect(processesWith(marker)).toEqual([])
  await rejected.dispose()

  // Approved always: it starts, and the model can call it (a workspace server's tools always ask: approved too).
  const approved = await boot([toolCall('echo', 'mcp__repo__echo', { text: 'hi' }), { text: 'done' }], {
    home,
    workspace,
  })
  const asked = answering(approved, () => 'allow_always')
  await approved.run('go')
  expect(asked.map((request) => request.rule)).toEqual([askedFirst[0]!.rule, 'mcp(repo/echo)'])
  expect(approved.toolText('echo')).toBe('echo: hi')
  expect(processesWith(marker).length).toBeGreaterThan(0) // the server (and, confined, its bwrap)
  await approved.dispose()
  // Stopped with the session's agent.
  expect(await eventually(() => processesWith(marker).length === 0, 30_000)).toBe(true)

  // The next session: the held grants answer, nobody is asked.
  const later = await boot([toolCall('echo', 'mcp__repo__echo', { text: 'again' }), { text: 'done' }], {
    home,
    workspace,
  })
  await later.run('go')
  expect(later.toolText('echo')).toBe('echo: again')
  // The start is answered by its grant; the call skips its question (a held allow rule).
  expect(later.events('approval/decided').map((event) => event.data.by)).toEqual(['grant'])
  await later.dispose()

  // The repository changes the approved server's command: it is a new server to approve.
  const changed = await boot([{ text: 'no tools' }], {
    home,
    workspace,
    workspaceFiles: { '.mcp.json': workspaceFile(`${marker}-changed`) },
  })
  await changed.run('go')
  expect(changed.events('mcp/status').map((event) => event.data.state)).toEqual(['refused'])
  expect(processesWith(`${marker}-changed`)).toEqual([])
  await changed.dispose()
})
