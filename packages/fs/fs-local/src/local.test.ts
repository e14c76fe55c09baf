import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { bootComposition } from '@dsh/test-harness'
import LocalFs from './index.ts'

test('a patch swaps in fs-local, which allows the writes fs-fenced refuses', async () => {
  const h = await bootComposition({ patch: "- id: fs\n  name: '@dsh/fs-local'\n" })
  try {
    expect(h.root.fs).toBeInstanceOf(LocalFs)
    const outside = join(h.home, 'outside.txt')
    await h.root.fs.writeFile(outside, 'written', {
      authority: { mode: 'workspace-write', writableRoots: [h.workspace] },
    })
    expect(readFileSync(outside, 'utf8')).toBe('written')
    await h.root.fs.mkdir(join(h.home, 'made'), { authority: { mode: 'read-only', writableRoots: [] } })
    expect(existsSync(join(h.home, 'made'))).toBe(true)
  } finally {
    await h.dispose()
  }
})
