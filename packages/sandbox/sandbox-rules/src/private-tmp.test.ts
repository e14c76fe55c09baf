import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import { hiddenByPrivateTmp } from './private-tmp.ts'

test('a command or script under /tmp makes its top-level /tmp folder readable; other words add nothing', () => {
  const root = mkdtempSync(join(tmpdir(), 'dsh-private-tmp-'))
  onTestFinished(() => rmSync(root, { recursive: true, force: true }))
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
