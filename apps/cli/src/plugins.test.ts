// `dsh plugins` end to end with real npm and real files (issue #31 item 2): what add refuses, what an
// install may not do (run scripts), what resolution may not use (the workspace), and a plugin that throws
// at load costing only its own row.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { offeredTools, pluginWorld, type PluginWorld } from '../../../examples/plugin-test-world.ts'

let world: PluginWorld
beforeEach(async () => {
  world = await pluginWorld()
})
afterEach(() => world.close())

const manifest = (name: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    name,
    version: '1.0.0',
    type: 'module',
    exports: './index.js',
    dsh: { plugin: { provides: [], injects: ['tools'] } },
    ...extra,
  })

/** A plugin module that registers a tool named `tool` answering `answer`. */
const toolModule = (tool: string, answer: string) => `export const inject = ['tools']
export function apply(ctx) {
  ctx.tools.register(ctx, {
    name: '${tool}',
    description: 'test tool',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    async execute() { return '${answer}' },
  })
}
`

const installedDeps = () => {
  const file = join(world.home, 'plugins', 'package.json')
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')).dependencies ?? {}) : {}
}
const layerText = () => {
  const file = join(world.home, 'cordis.patch.yml')
  return existsSync(file) ? readFileSync(file, 'utf8') : ''
}

test('a package without a dsh.plugin declaration is refused by name of the field, and nothing stays installed', async () => {
  const tarball = world.packFiles('not-a-plugin', {
    'package.json': JSON.stringify({ name: 'not-a-plugin', version: '1.0.0', type: 'module' }),
    'index.js': 'export function apply() {}\n',
  })
  const result = await world.dsh(['plugins', 'add', tarball])
  expect(result.code).toBe(1)
  expect(result.stderr).toContain('not a dsh plugin: package.json has no "dsh.plugin" field')
  expect(result.stderr).toContain('(nothing installed)')
  expect(installedDeps()).toEqual({})
  expect(existsSync(join(world.home, 'plugins', 'node_modules', 'not-a-plugin'))).toBe(false)
  expect(layerText()).toBe('')

  const bad = world.packFiles('half-declared', {
    'package.json': manifest('half-declared', { dsh: { plugin: { provides: ['x'] } } }),
    'index.js': toolModule('t', 'a'),
  })
  const refused = await world.dsh(['plugins', 'add', bad])
  expect(refused.code).toBe(1)
  expect(refused.stderr).toContain('"dsh.plugin.injects" must be a list of service names')

  const ownScope = world.packFiles('takes-dsh', {
    'package.json': manifest('takes-dsh', { dependencies: { '@dsh/tools': '0.1.0' } }),
    'index.js': toolModule('t', 'a'),
  })
  const scoped = await world.dsh(['plugins', 'add', ownScope])
  expect(scoped.code).toBe(1)
  // Refused before npm could fetch a package of that name from a registry.
  expect(scoped.stderr).toContain('"dependencies" lists @dsh/tools: dsh provides its own packages')
  expect(scoped.stderr).not.toContain('npm install')
  expect(installedDeps()).toEqual({})
})

test("a plugin's install scripts do not run: the file its postinstall (and preinstall, install, prepare) writes is absent", async () => {
  const marks = ['preinstall', 'install', 'postinstall', 'prepare'].map((script) => join(world.root, `${script}.ran`))
  const scripts = Object.fromEntries(
    marks.map((file) => [
      file.split('/').pop()!.replace('.ran', ''),
      `node -e "require('fs').writeFileSync('${file}', 'x')"`,
    ]),
  )
  const tarball = world.packFiles('scripted-plugin', {
    'package.json': manifest('scripted-plugin', { scripts }),
    'index.js': toolModule('scripted', 'ok'),
  })
  const result = await world.dsh(['plugins', 'add', tarball])
  expect(result.stderr).toBe('')
  expect(result.code).toBe(0)
  expect(installedDeps()['scripted-plugin']).toMatch(/^file:/)
  for (const file of marks) expect(existsSync(file), file).toBe(false)
})

test('rows are never resolved from the workspace: its node_modules and a .dsh/plugins there are not plugin sources', async () => {
  const mark = join(world.root, 'workspace-code.ran')
  const evil = {
    'package.json': manifest('evil-plugin'),
    'index.js': `import { writeFileSync } from 'node:fs'\nwriteFileSync(${JSON.stringify(mark)}, 'x')\n${toolModule('evil', 'pwned')}`,
  }
  for (const base of [
    join(world.workspace, 'node_modules', 'evil-plugin'),
    join(world.workspace, '.dsh', 'plugins', 'node_modules', 'evil-plugin'),
  ]) {
    mkdirSync(base, { recursive: true })
    for (const [file, text] of Object.entries(evil)) writeFileSync(join(base, file), text)
  }
  writeFileSync(join(world.workspace, 'package.json'), JSON.stringify({ dependencies: { 'evil-plugin': '1.0.0' } }))
  writeFileSync(
    join(world.workspace, '.dsh', 'plugins', 'package.json'),
    JSON.stringify({ dependencies: { 'evil-plugin': '1.0.0' } }),
  )
  writeFileSync(join(world.home, 'cordis.patch.yml'), '- insert:\n    - id: evil\n      name: evil-plugin\n')
  world.llm.enqueue({ text: 'never asked' })
  const result = await world.dsh(['do something'])
  expect(result.code).toBe(2)
  expect(result.stderr).toContain(
    `${join(world.home, 'cordis.patch.yml')}:2: plugin "evil-plugin" of row "evil" is not installed: no bundle of this profile has it and ${join(world.home, 'plugins')} does not`,
  )
  expect(existsSync(mark)).toBe(false)
  expect(world.llm.requests).toHaveLength(0)
})

test('a plugin that throws at load or while applying is a located error naming it and its file; the rest boots', async () => {
  await world.dsh([
    'plugins',
    'add',
    world.packFiles('throws-at-load', {
      'package.json': manifest('throws-at-load'),
      'index.js': `throw new Error('broken on purpose')\n`,
    }),
  ])
  await world.dsh([
    'plugins',
    'add',
    world.packFiles('throws-at-apply', {
      'package.json': manifest('throws-at-apply'),
      'index.js': `export const inject = ['tools']\nexport function apply() { throw new Error('apply refused') }\n`,
    }),
  ])
  const good = await world.dsh([
    'plugins',
    'add',
    world.packFiles('works-fine', { 'package.json': manifest('works-fine'), 'index.js': toolModule('fine', 'ok') }),
  ])
  expect(good.code).toBe(0)
  const layer = join(world.home, 'cordis.patch.yml')
  const lineOf = (name: string) => layerText().split('\n').indexOf(`    - id: plugin-${name}`) + 1
  world.llm.enqueue({ text: 'booted anyway' })
  const result = await world.dsh(['do something'])
  expect(result.code).toBe(0)
  const entry = (name: string) => join(world.home, 'plugins', 'node_modules', name, 'index.js')
  expect(result.stderr).toContain(
    `dsh: ${layer}:${lineOf('throws-at-load')}: plugin "throws-at-load" 1.0.0 of row "plugin-throws-at-load" threw while loading ${entry('throws-at-load')}: broken on purpose\n`,
  )
  expect(result.stderr).toContain(
    `dsh: ${layer}:${lineOf('throws-at-apply')}: plugin "throws-at-apply" 1.0.0 of row "plugin-throws-at-apply" threw while applying (${entry('throws-at-apply')}): apply refused\n`,
  )
  // The rest of the tree, the working plugin included, served the session.
  expect(offeredTools(world.llm, 0)).toEqual(expect.arrayContaining(['fine', 'read']))
  expect(result.stdout).toContain('booted anyway')
})

test('a plugin that injects a service its declaration does not name is not mounted, with the field named', async () => {
  await world.dsh([
    'plugins',
    'add',
    world.packFiles('sneaky-inject', {
      'package.json': manifest('sneaky-inject', { dsh: { plugin: { provides: [], injects: [] } } }),
      'index.js': toolModule('sneaky', 'ok'),
    }),
  ])
  world.llm.enqueue({ text: 'fine' })
  const result = await world.dsh(['do something'])
  expect(result.code).toBe(0)
  expect(result.stderr).toContain('injects tools, which its package.json "dsh.plugin.injects" does not declare')
  expect(offeredTools(world.llm, 0)).not.toContain('sneaky')
})

test('update installs another version of an installed plugin; list shows it; an unknown name is refused', async () => {
  const v1 = world.packFiles('versioned-v1', {
    'package.json': manifest('versioned'),
    'index.js': toolModule('v', 'one'),
  })
  const v2 = world.packFiles('versioned-v2', {
    'package.json': JSON.stringify({ ...JSON.parse(manifest('versioned')), version: '2.0.0' }),
    'index.js': toolModule('v', 'two'),
  })
  expect((await world.dsh(['plugins', 'add', v1])).code).toBe(0)
  const updated = await world.dsh(['plugins', 'update', 'versioned', v2])
  expect(updated.stderr).toBe('')
  expect(updated.stdout).toContain('updated versioned 1.0.0 -> 2.0.0')
  const listed = JSON.parse((await world.dsh(['plugins', 'list', '--json'])).stdout)
  expect(listed.plugins).toEqual([
    expect.objectContaining({ name: 'versioned', version: '2.0.0', rows: ['plugin-versioned'] }),
  ])
  // One row still: update does not add another.
  expect(layerText().match(/name: versioned/g)).toHaveLength(1)
  const unknown = await world.dsh(['plugins', 'update', 'nope'])
  expect(unknown.code).toBe(1)
  expect(unknown.stderr).toContain('"nope" is not installed')
  const wrong = await world.dsh([
    'plugins',
    'update',
    'versioned',
    world.packFiles('other', { 'package.json': manifest('other'), 'index.js': toolModule('o', 'o') }),
  ])
  expect(wrong.code).toBe(1)
  expect(wrong.stderr).toContain('is the package "other", not "versioned"')
  expect(Object.keys(installedDeps())).toEqual(['versioned'])
  // The refused update put the installed version back.
  expect(JSON.parse((await world.dsh(['plugins', 'list', '--json'])).stdout).plugins[0].version).toBe('2.0.0')
  // A scoped name is a registry name (asked of npm, offline here), not a path; `user/repo` is a path, refused.
  const scopedName = await world.dsh(['plugins', 'add', '@acme/plugin-x@1.0.0'])
  expect(scopedName.code).toBe(1)
  expect(scopedName.stderr).toContain('npm view @acme/plugin-x@1.0.0 failed')
  const github = await world.dsh(['plugins', 'add', 'someone/repo'])
  expect(github.code).toBe(1)
  expect(github.stderr).toContain('a local plugin is given as a packed .tgz file (npm pack), not a folder')
})

test('the user layer keeps its comments and rows when a plugin is added and removed', async () => {
  const layer = join(world.home, 'cordis.patch.yml')
  writeFileSync(layer, '# my own notes\n- id: tool-web-fetch\n  disabled: true # no fetching\n')
  const tarball = world.packFiles('kept', { 'package.json': manifest('kept'), 'index.js': toolModule('k', 'k') })
  await world.dsh(['plugins', 'add', tarball])
  expect(layerText()).toContain('# my own notes\n- id: tool-web-fetch\n  disabled: true # no fetching\n')
  const dump = await world.dsh(['--dump-config'])
  expect(dump.stdout).toMatch(new RegExp(`# home ${layer}:\\d+ \\(insert, name\\)\\n- id: plugin-kept\\n  name: kept`))
  expect((await world.dsh(['plugins', 'list'])).stdout).toBe(`kept@1.0.0  row plugin-kept in ${layer}\n`)
  await world.dsh(['plugins', 'remove', 'kept'])
  expect((await world.dsh(['plugins', 'list'])).stdout).toBe(
    `no plugins installed in ${join(world.home, 'plugins')} (dsh plugins add <package>)\n`,
  )
  const bare = await world.dsh(['plugins'])
  expect(bare.code).toBe(2)
  expect(bare.stderr).toContain('dsh plugins add <package>[@version] | <file.tgz>')
  expect(layerText()).toBe('# my own notes\n- id: tool-web-fetch\n  disabled: true # no fetching\n')
})
