import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { FsError } from '@dsh/fs'
import { bootComposition } from '@dsh/test-harness'
import FencedFs from './index.ts'

test('bundle-base mounts fs-fenced as ctx.fs and it fences writes to the workspace', async () => {
  const h = await bootComposition()
  try {
    const fs = h.root.get('fs')
    expect(fs).toBeInstanceOf(FencedFs)
    const authority = { mode: 'workspace-write' as const, writableRoots: [h.workspace] }
    await fs!.writeFile(join(h.workspace, 'in.txt'), 'inside', { authority })
    expect(readFileSync(join(h.workspace, 'in.txt'), 'utf8')).toBe('inside')
    const error = await fs!.writeFile(join(h.home, 'out.txt'), 'outside', { authority }).catch((e: FsError) => e)
    expect((error as FsError).code).toBe('FS_SANDBOX_DENIED')
    expect(existsSync(join(h.home, 'out.txt'))).toBe(false)
  } finally {
    await h.dispose()
  }
})
