// Resolution from $DSH_HOME/plugins, without npm: folders written by hand as npm would leave them, then
// findInstalledPlugin and an in-process boot of the headless profile (apps/cli's launcher manifest).
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { bootTree, type BootedTree } from './boot.ts'
import { CompositionError } from './errors.ts'
import { findInstalledPlugin, pluginsDirOf, readPluginDeclaration } from './user-plugins.ts'
import { tempHome } from './test-support/temp-home.ts'

const appDir = join(dirname(fileURLToPath(import.meta.url)), '../../../../apps/cli')
const declared = { dsh: { plugin: { provides: [], injects: ['tools'] } } }

let home: ReturnType<typeof tempHome>
let tree: BootedTree | undefined
beforeEach(() => {
  home = tempHome()
})
afterEach(async () => {
  await tree?.stop()
  tree = undefined
  home.remove()
})

/** Writes `node_modules/<name>` in the plugins folder; `listed` puts it in the folder's package.json too. */
function install(name: string, files: Record<string, string>, { listed = true, manifest = {} as object } = {}) {
  const dir = pluginsDirOf(home.dir)
  for (const [file, text] of Object.entries({
    'package.json': JSON.stringify({ name, version: '1.2.3', type: 'module', ...declared, ...manifest }),
    ...files,
  }))
    home.write(join('plugins', 'node_modules', name, file), text)
  if (listed) {
    const deps: Record<string, string> = {}
    for (const other of installedList) deps[other] = '1.2.3'
    deps[name] = '1.2.3'
    installedList.push(name)
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'dsh-plugins', dependencies: deps }))
  }
}
let installedList: string[] = []
beforeEach(() => {
  installedList = []
})

test('only packages the folder lists are plugins; the entry comes from exports; links out of the folder are refused', () => {
  const dir = pluginsDirOf(home.dir)
  install(
    'listed',
    { 'lib/main.js': 'export function apply() {}\n' },
    { manifest: { exports: { '.': { import: './lib/main.js' } } } },
  )
  install('unlisted', { 'index.js': 'export function apply() {}\n' }, { listed: false })
  expect(findInstalledPlugin(dir, 'listed')).toMatchObject({
    name: 'listed',
    version: '1.2.3',
    entry: join(dir, 'node_modules', 'listed', 'lib', 'main.js'),
    declaration: { provides: [], injects: ['tools'] },
  })
  expect(findInstalledPlugin(dir, 'unlisted')).toBeUndefined()

  // A package that is a link to a folder elsewhere (what `npm install ./dir` makes) is not taken.
  const outside = join(home.dir, 'elsewhere')
  mkdirSync(outside)
  writeFileSync(join(outside, 'package.json'), JSON.stringify({ name: 'linked', version: '1.0.0', ...declared }))
  symlinkSync(outside, join(dir, 'node_modules', 'linked'))
  installedList.push('linked')
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ dependencies: { listed: '1', linked: '1' } }))
  expect(() => findInstalledPlugin(dir, 'linked')).toThrow(/links outside the plugins folder/)

  install('escapes', {}, { manifest: { main: '../listed/lib/main.js' } })
  expect(() => findInstalledPlugin(dir, 'escapes')).toThrow(/its entry .* is outside the package/)
})

test('the declaration: missing, malformed, unknown keys and @dsh/* dependencies are refused naming the field', () => {
  expect(() => readPluginDeclaration({ name: 'x' }, '/p/package.json')).toThrow(
    '/p/package.json: not a dsh plugin: package.json has no "dsh.plugin" field',
  )
  expect(() => readPluginDeclaration({ dsh: { plugin: { provides: 'tools', injects: [] } } }, 'f')).toThrow(
    '"dsh.plugin.provides" must be a list of service names',
  )
  expect(() => readPluginDeclaration({ dsh: { plugin: { provides: [], injects: [], run: 'x' } } }, 'f')).toThrow(
    '"dsh.plugin" has unknown keys: run',
  )
  expect(() => readPluginDeclaration({ ...declared, optionalDependencies: { '@dsh/cordis': '0.1.0' } }, 'f')).toThrow(
    '"optionalDependencies" lists @dsh/cordis',
  )
  expect(readPluginDeclaration({ dsh: { plugin: { provides: ['webSearch'], injects: [] } } }, 'f')).toEqual({
    provides: ['webSearch'],
    injects: [],
  })
})

test('boot mounts a listed plugin after the bundles, and one that throws at load costs only its row', async () => {
  install('good-plugin', {
    'index.js': `export const inject = ['tools']
export function apply(ctx) {
  ctx.tools.register(ctx, { name: 'good', description: 'd', parameters: { type: 'object', properties: {} }, async execute() { return 'ok' } })
}
`,
  })
  install('bad-plugin', { 'index.js': `throw new Error('no luck')\n` })
  home.write(
    'cordis.patch.yml',
    '- insert:\n    - id: good\n      name: good-plugin\n    - id: bad\n      name: bad-plugin\n',
  )
  tree = await bootTree({ appDir, profile: 'headless', cwd: home.dir, home: home.dir })
  expect((tree.root as any).tools.visible('main').map((tool: { name: string }) => tool.name)).toContain('good')
  expect(tree.pluginFailures).toEqual([
    expect.objectContaining({
      id: 'bad',
      name: 'bad-plugin',
      problem: `${join(home.dir, 'cordis.patch.yml')}:4: plugin "bad-plugin" 1.2.3 of row "bad" threw while loading ${join(pluginsDirOf(home.dir), 'node_modules', 'bad-plugin', 'index.js')}: no luck`,
    }),
  ])
  expect((tree.loader as any).store.bad.disabled).toBe(true)
})

test('an unlisted package in the plugins folder does not resolve a row: a located not-installed error', async () => {
  install('stray', { 'index.js': 'export function apply() {}\n' }, { listed: false })
  home.write('cordis.patch.yml', '- insert: [{ id: stray, name: stray }]\n')
  const error = await bootTree({ appDir, profile: 'headless', cwd: home.dir, home: home.dir }).catch((e) => e)
  expect(error).toBeInstanceOf(CompositionError)
  expect(error.message).toContain(`cordis.patch.yml:1: plugin "stray" of row "stray" is not installed`)
})

test('rows that only wait for what a failed installed plugin would provide are reported with it, and the tree boots', async () => {
  install(
    'broken-search',
    { 'index.js': `export function apply() { throw new Error('search is down') }\n` },
    { manifest: { dsh: { plugin: { provides: ['webSearch'], injects: [] } } } },
  )
  install(
    'needs-nothing-there',
    { 'index.js': `export const inject = ['noSuchService']\nexport function apply() {}\n` },
    { manifest: { dsh: { plugin: { provides: [], injects: ['noSuchService'] } } } },
  )
  home.write(
    'cordis.patch.yml',
    [
      '- insert:',
      '    - id: search',
      '      name: broken-search',
      '    - id: needy',
      '      name: needs-nothing-there',
      '- id: tool-web-search',
      '  disabled: false',
      '',
    ].join('\n'),
  )
  tree = await bootTree({ appDir, profile: 'headless', cwd: home.dir, home: home.dir })
  const problems = tree.pluginFailures.map((failure) => failure.problem)
  const layer = join(home.dir, 'cordis.patch.yml')
  expect(problems).toEqual(
    expect.arrayContaining([
      expect.stringMatching(
        new RegExp(
          `^${layer}:2: plugin "broken-search" 1.2.3 of row "search" threw while applying \\(.*index\\.js\\): search is down$`,
        ),
      ),
      `${layer}:4: plugin "needs-nothing-there" 1.2.3 of row "needy" waits for services no mounted row provides: noSuchService`,
      'row "tool-web-search" (@dsh/tool-web-search) is not mounted: it waits for services no mounted row provides: webSearch (an installed plugin that failed may be the one that provides it)',
    ]),
  )
  expect(problems).toHaveLength(3)
  expect((tree.root as any).tools.visible('main').map((tool: { name: string }) => tool.name)).toContain('read')
})
