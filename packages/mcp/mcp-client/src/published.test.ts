import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import { toolCall } from '@dsh/test-harness'
import { boot } from './fixtures/boot.ts'

// The published reference servers, installed as devDependencies and started over stdio (confined: the
// default workspace-write mode), as a user's mcp.yaml would name them.
const require = createRequire(import.meta.url)
const entry = (name: string) =>
  join(dirname(require.resolve(`@modelcontextprotocol/${name}/package.json`)), 'dist', 'index.js')
const server = (name: string, args: string[]) =>
  `{ command: ${JSON.stringify(process.execPath)}, args: ${JSON.stringify([entry(name), ...args])}, trust: allow }`

test('@modelcontextprotocol/server-everything over stdio: echo answers, and its get-env sees no parent secret', async () => {
  process.env.DSH_TEST_EVERYTHING_API_KEY = 'everything-parent-secret-1'
  onTestFinished(() => void delete process.env.DSH_TEST_EVERYTHING_API_KEY)
  const h = await boot(
    [
      toolCall('echo', 'mcp__everything__echo', { message: 'hello reference' }),
      toolCall('env', 'mcp__everything__get-env', {}),
      { text: 'done' },
    ],
    {
      homeFiles: { 'mcp.yaml': `mcpServers:\n  everything: ${server('server-everything', ['stdio'])}\n` },
    },
  )
  await h.run('go')
  expect(h.toolText('echo')).toContain('hello reference')
  expect(h.toolResult('env').error).toBeUndefined()
  expect(h.toolText('env')).toContain('PATH')
  expect(h.toolText('env')).not.toContain('DSH_TEST_EVERYTHING_API_KEY')
  expect(h.toolText('env')).not.toContain('everything-parent-secret-1')
})

test('@modelcontextprotocol/server-filesystem over stdio: reads a workspace file, lists the directory, refuses a path outside it', async () => {
  const h = await boot(
    [
      toolCall('read', 'mcp__fs__read_text_file', { path: 'notes.txt' }),
      toolCall('list', 'mcp__fs__list_directory', { path: '.' }),
      toolCall('outside', 'mcp__fs__read_text_file', { path: '/etc/hostname' }),
      { text: 'done' },
    ],
    {
      workspaceFiles: { 'notes.txt': 'reference notes\n' },
      homeFiles: { 'mcp.yaml': `mcpServers:\n  fs: ${server('server-filesystem', ['.'])}\n` },
    },
  )
  await h.run('go')
  expect(h.toolText('read')).toContain('reference notes')
  expect(h.toolText('list')).toContain('notes.txt')
  expect(h.toolResult('outside').error?.code).toBe('MCP_TOOL_ERROR')
  expect(h.toolText('outside')).toMatch(/outside allowed directories|Access denied/i)
})
