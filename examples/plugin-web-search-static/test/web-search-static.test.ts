// The example provider plugin as a user gets it: packed, installed from the tarball with `dsh plugins add`
// offline, given pages in its row, and `web_search` (the shipped tool) answered by it in a headless session.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { copyExample, offeredTools, pluginWorld, toolResults, type PluginWorld } from '../../plugin-test-world.ts'

let world: PluginWorld
beforeEach(async () => {
  world = await pluginWorld()
})
afterEach(() => world.close())

test('installed from its tarball, the plugin provides ctx.webSearch: the web_search tool answers from its pages', async () => {
  const added = await world.dsh(['plugins', 'add', world.pack(copyExample(world, 'plugin-web-search-static'))])
  expect(added.stderr).toBe('')
  expect(added.code).toBe(0)
  expect(added.stdout).toContain('provides webSearch; injects nothing')
  const layer = join(world.home, 'cordis.patch.yml')
  const configured = readFileSync(layer, 'utf8').replace(
    '      name: dsh-plugin-web-search-static\n',
    [
      '      name: dsh-plugin-web-search-static',
      '      config:',
      '        label: team bookmarks',
      '        pages:',
      '          - { title: Cordis plugins, url: "https://example.test/cordis", snippet: How a Cordis plugin applies }',
      '          - { title: Lunch menu, url: "https://example.test/lunch", snippet: Soup on Fridays }',
      '- id: tool-web-search',
      '  disabled: false',
      '',
    ].join('\n'),
  )
  writeFileSync(layer, configured)

  world.llm.enqueue(
    { toolCalls: [{ name: 'web_search', arguments: { query: 'cordis plugin' } }] },
    { text: 'found it' },
  )
  const session = await world.dsh(['search for cordis'])
  expect(session.stderr).toBe('')
  expect(session.code).toBe(0)
  expect(offeredTools(world.llm, 0)).toContain('web_search')
  const result = toolResults(world.llm, 1).join('\n')
  expect(result).toContain('Search results from team bookmarks for "cordis plugin"')
  expect(result).toContain('https://example.test/cordis')
  expect(result).not.toContain('Lunch menu')

  // Removed, nothing provides webSearch: the enabled tool row now waits for it, and boot says so.
  expect((await world.dsh(['plugins', 'remove', 'dsh-plugin-web-search-static'])).code).toBe(0)
  const after = await world.dsh(['search again'])
  expect(after.code).toBe(1)
  expect(after.stderr).toContain(
    'row "tool-web-search" (@dsh/tool-web-search): waits for services no mounted row provides: webSearch',
  )
})
