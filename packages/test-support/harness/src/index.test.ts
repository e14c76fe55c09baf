import { existsSync } from 'node:fs'
import { expect, test } from 'vitest'
import { bootComposition } from './index.ts'

test('boots the real headless profile in temp folders and removes them on dispose', async () => {
  const h = await bootComposition({ workspaceFiles: { 'README.md': '# hi\n' }, patch: '- id: logger\n  config: { level: error }\n' })
  expect(existsSync(`${h.workspace}/README.md`)).toBe(true)
  expect(h.profile.name).toBe('headless')
  expect((h.loader as any).store.logger.fiber.config.level).toBe('error')
  expect(h.root.get('cmdlineArgs')).toBeDefined()
  await h.dispose()
  expect(existsSync(h.home)).toBe(false)
  expect(existsSync(h.workspace)).toBe(false)
})
