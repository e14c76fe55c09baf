import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { tempDir } from '@dsh/test-harness/world'
import { hiddenByPrivateTmp } from './stdio.ts'

test('a server command or script under /tmp makes its top-level /tmp folder readable; other words add nothing', () => {
  const root = tempDir('dsh-mcp-tmp-') // under /tmp: tmpdir()
  mkdirSync(join(root, 'pkg'), { recursive: true })
  writeFileSync(join(root, 'pkg', 'server.mjs'), '')
  expect(root.startsWith('/tmp/')).toBe(true)
  expect(
    hiddenByPrivateTmp([
      process.execPath,
      join(root, 'pkg', 'server.mjs'),
      '--flag',
      'relative/path',
      join(root, 'absent.mjs'),
    ]),
  ).toEqual([root])
  expect(hiddenByPrivateTmp(['/usr/bin/env', 'node', '/etc/hostname'])).toEqual([])
})
