import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import { bootComposition, scriptedPatch, toolCall } from './index.ts'
import { outsideDir, tempDir } from './world.ts'

test('boots the real headless profile in temp folders and removes them on dispose', async () => {
  const h = await bootComposition({
    workspaceFiles: { 'README.md': '# hi\n' },
    patch: '- id: logger\n  config: { level: error }\n',
  })
  expect(existsSync(`${h.workspace}/README.md`)).toBe(true)
  expect(h.profile.name).toBe('headless')
  expect((h.loader as any).store.logger.fiber.config.level).toBe('error')
  expect(h.root.get('cmdlineArgs')).toBeDefined()
  await h.dispose()
  expect(existsSync(h.home)).toBe(false)
  expect(existsSync(h.workspace)).toBe(false)
})

test('scriptedPatch routes the agent to the scripted model with the fixture tools, and toolResult reads a call back', async () => {
  const h = await bootComposition({ patch: scriptedPatch({ fixtureTools: true }) })
  onTestFinished(() => h.dispose())
  h.root.scriptedLlm.enqueue(toolCall('w', 'write_file', { path: 'a.txt', text: 'hi' }), { text: 'done' })
  expect((await h.run('write')).reason).toBe('completed')
  expect(readFileSync(join(h.workspace, 'a.txt'), 'utf8')).toBe('hi')
  expect(h.toolText('w')).toBe('wrote 2 bytes to a.txt')
  expect(h.toolResult('w').error).toBeUndefined()
  expect(() => h.toolResult('missing')).toThrow('no tool/result for call missing in the log')
})

test('temp and outside directories exist during the test and are gone when it finishes', () => {
  const dirs: string[] = []
  onTestFinished(() => expect(dirs.filter((dir) => existsSync(dir))).toEqual([])) // hooks run last-in first-out: this one runs last
  dirs.push(tempDir(), outsideDir())
  expect(dirs.every((dir) => existsSync(dir))).toBe(true)
  expect(dirs[1]!.startsWith('/tmp/')).toBe(false)
})
