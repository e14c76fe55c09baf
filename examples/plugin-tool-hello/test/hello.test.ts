// The example tool plugin as a user gets it: packed (`npm pack`), installed from the tarball with
// `dsh plugins add` offline, then a headless session whose scripted model calls `hello`; removed, the next
// session is not offered the tool.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { copyExample, offeredTools, pluginWorld, toolResults, type PluginWorld } from '../../plugin-test-world.ts'

let world: PluginWorld
beforeEach(async () => {
  world = await pluginWorld()
})
afterEach(() => world.close())

test('dsh plugins add of the packed tarball: the next session offers `hello` and the model uses it; remove takes it away', async () => {
  const tarball = world.pack(copyExample(world, 'plugin-tool-hello'))
  const added = await world.dsh(['plugins', 'add', tarball])
  expect(added.stderr).toBe('')
  expect(added.code).toBe(0)
  expect(added.stdout).toMatch(/installed dsh-plugin-tool-hello@1\.0\.0 into .*plugins\n {2}integrity sha512-/)
  expect(added.stdout).toContain('the next start of dsh mounts it')
  // Exact version and a lockfile in the plugins folder; the row in the user's layer.
  const manifest = JSON.parse(readFileSync(join(world.home, 'plugins', 'package.json'), 'utf8'))
  expect(manifest.dependencies['dsh-plugin-tool-hello']).toMatch(/^file:.*dsh-plugin-tool-hello-1\.0\.0\.tgz$/)
  expect(existsSync(join(world.home, 'plugins', 'package-lock.json'))).toBe(true)
  expect(readFileSync(join(world.home, 'cordis.patch.yml'), 'utf8')).toContain('name: dsh-plugin-tool-hello')

  world.llm.enqueue({ toolCalls: [{ name: 'hello', arguments: { name: 'Ada' } }] }, { text: 'I greeted Ada.' })
  const session = await world.dsh(['say hello to Ada'])
  expect(session.stderr).toBe('')
  expect(session.code).toBe(0)
  expect(offeredTools(world.llm, 0)).toContain('hello')
  expect(toolResults(world.llm, 1).join('\n')).toContain('Hello, Ada! (from the dsh-plugin-tool-hello plugin)')

  const listed = await world.dsh(['plugins', 'list', '--json'])
  expect(JSON.parse(listed.stdout).plugins).toEqual([
    expect.objectContaining({
      name: 'dsh-plugin-tool-hello',
      version: '1.0.0',
      rows: ['plugin-dsh-plugin-tool-hello'],
    }),
  ])

  const removed = await world.dsh(['plugins', 'remove', 'dsh-plugin-tool-hello'])
  expect(removed.code).toBe(0)
  expect(removed.stdout).toContain('removed row plugin-dsh-plugin-tool-hello')
  expect(readFileSync(join(world.home, 'cordis.patch.yml'), 'utf8')).not.toContain('dsh-plugin-tool-hello')
  expect(existsSync(join(world.home, 'plugins', 'node_modules', 'dsh-plugin-tool-hello'))).toBe(false)

  const before = world.llm.requests.length
  world.llm.enqueue({ text: 'No hello tool here.' })
  const after = await world.dsh(['say hello to Ada'])
  expect(after.code).toBe(0)
  expect(offeredTools(world.llm, before)).not.toContain('hello')
  expect(offeredTools(world.llm, before)).toContain('read')
})

test('the row config reaches the plugin: `greeting` set in the user layer changes what `hello` returns', async () => {
  await world.dsh(['plugins', 'add', world.pack(copyExample(world, 'plugin-tool-hello'))])
  const layer = join(world.home, 'cordis.patch.yml')
  const text = readFileSync(layer, 'utf8').replace(
    '      name: dsh-plugin-tool-hello\n',
    '      name: dsh-plugin-tool-hello\n      config: { greeting: Bonjour }\n',
  )
  await import('node:fs').then((fs) => fs.writeFileSync(layer, text))
  world.llm.enqueue({ toolCalls: [{ name: 'hello', arguments: { name: 'Ada' } }] }, { text: 'done' })
  const session = await world.dsh(['greet Ada'])
  expect(session.code).toBe(0)
  expect(toolResults(world.llm, 1).join('\n')).toContain('Bonjour, Ada!')
})
