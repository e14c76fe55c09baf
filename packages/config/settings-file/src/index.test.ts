import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, expect, test } from 'vitest'
import { bootTree, type BootedTree } from '@dsh/app-boot'
import type { Context } from '@dsh/cordis'
import type { SettingsError } from '@dsh/settings'
import { appDir, bootComposition, type Harness } from '@dsh/test-harness'
import SettingsFile from './index.ts'
import * as probe from './test-support/setting-probe.ts'

// How a plugin types the settings it defines: `get('probe.limit')` is then a number.
declare module '@dsh/settings' {
  interface Settings {
    'probe.limit': number
  }
}

// The probe is mounted by a YAML row, the way bundles mount real plugins.
const probeFile = fileURLToPath(new URL('./test-support/setting-probe.ts', import.meta.url))
const withProbe = `- insert:\n    - id: probe\n      name: ${probeFile}\n      config: { key: probe.limit, default: 10 }\n`

const open: Array<{ stop(): Promise<void> }> = []
afterEach(async () => {
  for (const tree of open.splice(0).toReversed()) await tree.stop()
})

async function boot(settings?: string, patch = withProbe): Promise<Harness> {
  const h = await bootComposition({ patch, homeFiles: settings === undefined ? {} : { 'settings.yaml': settings } })
  open.push({ stop: () => h.dispose() })
  return h
}

/** A second tree on the same home and workspace, as a relaunch of `dsh` would boot. */
async function bootAgain(h: Harness): Promise<BootedTree> {
  const tree = await bootTree({
    appDir,
    profile: 'headless',
    home: h.home,
    cwd: h.workspace,
    patches: [join(h.home, 'test.patch.yml')],
  })
  open.push(tree)
  return tree
}

const settingsText = (h: Harness) => readFileSync(join(h.home, 'settings.yaml'), 'utf8')

test('a value in settings.yaml is what the defining plugin reads, and list() names the file and line', async () => {
  const h = await boot('# limits\nprobe.limit: 42\n')
  const limit: number = h.root.settings.get('probe.limit')
  expect(limit).toBe(42)
  expect(h.root.settings.list().find((entry) => entry.key === 'probe.limit')).toEqual({
    key: 'probe.limit',
    value: 42,
    default: 10,
    description: 'probe setting probe.limit',
    source: 'file',
    origin: `${h.home}/settings.yaml:2`,
  })
})

test('a key absent from the file reads as the schema default', async () => {
  const h = await boot()
  expect(h.root.settings.get('probe.limit')).toBe(10)
  expect(h.root.settings.list().find((entry) => entry.key === 'probe.limit')?.source).toBe('default')
})

test('a bad value in settings.yaml fails the plugin that defines the key, naming the file, the line and the key', async () => {
  const h = await boot('# limits\n\nprobe.limit: lots\n', '')
  const error = await h.root.plugin(probe, { key: 'probe.limit', default: 10 }).then(
    () => undefined,
    (caught: SettingsError) => caught,
  )
  expect(error).toMatchObject({
    code: 'SETTINGS_INVALID',
    key: 'probe.limit',
    file: `${h.home}/settings.yaml`,
    line: 3,
  })
  expect(error?.message).toBe(`${h.home}/settings.yaml:3: probe.limit: expected number but got lots`)
})

test('malformed YAML in settings.yaml stops the provider from starting, naming the file and the line', async () => {
  const h = await boot()
  writeFileSync(join(h.home, 'broken.yaml'), 'probe.limit: 1\nother: [1, 2\n')
  // A second provider in its own realm, so the product's settings row (which other rows need) stays up.
  const error = await h.root
    .isolate('settings')
    .plugin(SettingsFile, { file: 'broken.yaml' })
    .then(
      () => undefined,
      (caught: SettingsError) => caught,
    )
  expect(error).toMatchObject({ code: 'SETTINGS_FILE_INVALID', line: 3 })
  expect(error?.message).toMatch(new RegExp(`^${h.home}/broken\\.yaml:3: malformed YAML`))
})

test('a nested mapping where a flat dotted key is expected fails naming the line and the flat form', async () => {
  const h = await boot('probe:\n  limit: 5\n', '')
  const error = await h.root.plugin(probe, { key: 'probe.limit', default: 10 }).then(
    () => undefined,
    (caught: SettingsError) => caught,
  )
  expect(error?.message).toBe(
    `${h.home}/settings.yaml:1: "probe" is a nested mapping, but settings keys are flat: write \`probe.limit: …\` on one line`,
  )
})

test('a second plugin defining the same key fails with SETTINGS_DUPLICATE and the first keeps it', async () => {
  const h = await boot('probe.limit: 3\n')
  const error = await h.root.plugin(probe, { key: 'probe.limit', default: 1 }).then(
    () => undefined,
    (caught: SettingsError) => caught,
  )
  expect(error).toMatchObject({ code: 'SETTINGS_DUPLICATE', key: 'probe.limit' })
  expect(h.root.settings.get('probe.limit')).toBe(3)
})

test('set persists the value and a second composition on the same home reads it', async () => {
  const h = await boot()
  await h.root.settings.set('probe.limit', 7)
  expect(h.root.settings.get('probe.limit')).toBe(7)
  expect(settingsText(h)).toBe('probe.limit: 7\n')
  const second = await bootAgain(h)
  expect(second.root.settings.get('probe.limit')).toBe(7)
})

test('a value set survives a reboot of the composition', async () => {
  const h = await boot()
  await h.root.settings.set('probe.limit', 8)
  await h.stop()
  const rebooted = await bootAgain(h)
  expect(rebooted.root.settings.get('probe.limit')).toBe(8)
  expect(rebooted.root.settings.list().find((entry) => entry.key === 'probe.limit')?.origin).toBe(
    `${h.home}/settings.yaml:1`,
  )
})

test('set keeps the comments and the other keys of the file, including hand edits made while running', async () => {
  const h = await boot('# my settings\nprobe.limit: 3 # small on purpose\n')
  writeFileSync(join(h.home, 'settings.yaml'), `${settingsText(h)}# added by hand\nmystery.key: yes\n`)
  await h.root.settings.set('probe.limit', 4)
  expect(settingsText(h)).toBe('# my settings\nprobe.limit: 4 # small on purpose\n# added by hand\nmystery.key: yes\n')
})

test('set refuses a value the schema rejects and leaves the file unchanged', async () => {
  const h = await boot('probe.limit: 3\n')
  const error = await h.root.settings.set('probe.limit', -1).catch((caught: SettingsError) => caught)
  expect(error).toMatchObject({ code: 'SETTINGS_INVALID', key: 'probe.limit' })
  expect(settingsText(h)).toBe('probe.limit: 3\n')
  expect(h.root.settings.get('probe.limit')).toBe(3)
})

test('reset removes the key from the file and the default applies again', async () => {
  const h = await boot('probe.limit: 3\nmystery.key: 1\n')
  await h.root.settings.reset('probe.limit')
  expect(settingsText(h)).toBe('mystery.key: 1\n')
  expect(h.root.settings.list().find((entry) => entry.key === 'probe.limit')).toMatchObject({
    value: 10,
    source: 'default',
  })
})

test('onChange fires with the new and the previous value when the setting is set', async () => {
  const h = await boot()
  const seen: unknown[][] = []
  await h.root.plugin({
    name: 'watcher',
    inject: ['settings'],
    apply: (ctx: Context) =>
      void ctx.settings.onChange('probe.limit', (value, previous) => seen.push([value, previous])),
  })
  await h.root.settings.set('probe.limit', 11)
  expect(seen).toEqual([[11, 10]])
})

test('onChange stops firing once the plugin that registered it is disposed', async () => {
  const h = await boot()
  const seen: unknown[] = []
  const watcher = h.root.plugin({
    name: 'watcher',
    inject: ['settings'],
    apply: (ctx: Context) => void ctx.settings.onChange('probe.limit', (value) => seen.push(value)),
  })
  await watcher
  await watcher.dispose()
  await h.root.settings.set('probe.limit', 12)
  expect(seen).toEqual([])
})

test('a setting whose plugin is disposed is gone from list() and can no longer be read', async () => {
  const h = await boot()
  await h.loader.update('probe', { disabled: true })
  expect(h.root.settings.list().map((entry) => entry.key)).not.toContain('probe.limit')
  expect(() => h.root.settings.get('probe.limit')).toThrow(expect.objectContaining({ code: 'SETTINGS_UNDEFINED' }))
})

test('a key no mounted plugin defines is unclaimed, with its file and line, and kept in the file', async () => {
  const h = await boot('# hello\nmystery.key: 1\nprobe.limit: 3\n', withProbe)
  expect(h.root.settings.unclaimed()).toEqual([{ key: 'mystery.key', file: `${h.home}/settings.yaml`, line: 2 }])
  await h.root.settings.set('probe.limit', 5)
  expect(settingsText(h)).toContain('mystery.key: 1\n')
})
