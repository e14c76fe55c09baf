import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { tempDir } from '@dsh/test-harness/world'
import { readConfigured } from './sources.ts'

const files = { userFile: 'mcp.yaml', workspaceFile: '.mcp.json' }

test('an empty folder where .mcp.json would be (a confined command fencing the missing file) reads as no servers; a folder with content is an error naming it', async () => {
  const home = tempDir('dsh-mcp-home-')
  const cwd = tempDir('dsh-mcp-ws-')
  mkdirSync(join(cwd, '.mcp.json'))
  expect(await readConfigured(home, cwd, files)).toEqual([])
  writeFileSync(join(cwd, '.mcp.json', 'x'), '')
  await expect(readConfigured(home, cwd, files)).rejects.toThrow(/\.mcp\.json: cannot be read/)
})
