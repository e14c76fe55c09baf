// The direction gate run on fixture workspaces: it must reject an implementation exported from a package
// labelled `definition` (naming file, line and symbol), accept what a definition may hold, and still keep
// providers off each other while letting them stand on a service.
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, expect, test } from 'vitest'

const gate = fileURLToPath(new URL('./gates/dependency-direction.mjs', import.meta.url))
let roots = []
afterEach(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true })
  roots = []
})

/** A workspace with one package per entry: `{ 'packages/g/name': { role, deps?, files } }`. */
function workspace(packages) {
  const root = mkdtempSync(join(tmpdir(), 'dsh-direction-'))
  roots.push(root)
  mkdirSync(join(root, 'packages'))
  for (const [rel, { role, deps = [], files }] of Object.entries(packages)) {
    const name = `@dsh/${rel.split('/').at(-1)}`
    mkdirSync(join(root, rel, 'src'), { recursive: true })
    const dependencies = Object.fromEntries(deps.map((dep) => [dep, 'workspace:*']))
    writeFileSync(join(root, rel, 'package.json'), JSON.stringify({ name, dsh: { role }, dependencies }))
    for (const [file, text] of Object.entries(files)) writeFileSync(join(root, rel, 'src', file), text)
  }
  return root
}

function runGate(root) {
  const result = spawnSync(process.execPath, [gate, root], { encoding: 'utf8' })
  return { status: result.status, output: result.stdout + result.stderr }
}

const abstractService = [
  "import { Service } from '@dsh/cordis'",
  'export abstract class Fs extends Service {',
  '  abstract read(path: string): Promise<string>',
  "  async readOrEmpty(path: string): Promise<string> { return (await this.read(path)) ?? '' }",
  '}',
  '',
].join('\n')

test('the gate rejects an implementation class exported from a definition, naming file, line and symbol', () => {
  const root = workspace({
    'packages/fs/fs': {
      role: 'definition',
      deps: ['@dsh/cordis'],
      files: {
        'index.ts': abstractService,
        'disk.ts':
          "import { Fs } from './index.ts'\n\nexport class DiskFs extends Fs {\n  async read(path: string) { return path }\n}\n",
      },
    },
  })
  const { status, output } = runGate(root)
  expect(status).toBe(1)
  expect(output).toContain(
    'packages/fs/fs/src/disk.ts:3: exported class DiskFs is an implementation (neither abstract nor an Error subclass)',
  )
  expect(output).not.toContain('index.ts')
})

test('the gate rejects an async helper, a long helper, an object of helpers and a class exported by name or as default from a definition', () => {
  const long = Array.from({ length: 14 }, (_, i) => `  total += ${i}`).join('\n')
  const root = workspace({
    'packages/x/def': {
      role: 'definition',
      deps: ['@dsh/cordis'],
      files: {
        'io.ts':
          "import { readFile } from 'node:fs/promises'\nexport async function load(path: string) { return readFile(path, 'utf8') }\n",
        'long.ts': `export const sum = () => {\n  let total = 0\n${long}\n  return total\n}\n`,
        'listed.ts': 'class Cache { map = new Map() }\nexport { Cache }\n',
        'default.ts': 'export default class Runner { run() { return 1 } }\n',
        'object.ts': 'export const disk = {\n  async read(path: string) { return path },\n}\n',
      },
    },
  })
  const { status, output } = runGate(root)
  expect(status).toBe(1)
  expect(output).toContain('packages/x/def/src/io.ts:2: exported function load is async')
  expect(output).toContain('packages/x/def/src/long.ts:1: exported function sum has 16 statements')
  expect(output).toContain('packages/x/def/src/listed.ts:1: exported class Cache is an implementation')
  expect(output).toContain('packages/x/def/src/default.ts:1: exported class Runner is an implementation')
  expect(output).toContain('packages/x/def/src/object.ts:2: exported function disk.read is async')
})

test('a definition may hold an abstract service, Error classes, types, constants and small validators; its tests are not read', () => {
  const root = workspace({
    'packages/x/def': {
      role: 'definition',
      deps: ['@dsh/cordis'],
      files: {
        'index.ts': abstractService,
        'errors.ts': 'export class DefError extends Error {}\nexport class DefMissingError extends DefError {}\n',
        'types.ts':
          "export interface Thing { id: string }\nexport type Kind = 'a' | 'b'\nexport const KINDS = ['a', 'b'] as const\n",
        'validate.ts':
          "export function isKind(value: unknown): value is 'a' | 'b' {\n  return value === 'a' || value === 'b'\n}\n",
        'index.test.ts': 'export class Fixture { run() { return 1 } }\n',
      },
    },
  })
  const { status, output } = runGate(root)
  expect(output).toContain('dependency direction: ok (1 packages)')
  expect(status).toBe(0)
})

test('a provider may stand on a service but not on another provider', () => {
  const root = workspace({
    'packages/core/session': {
      role: 'service',
      files: { 'index.ts': 'export class Sessions { list() { return [] } }\n' },
    },
    'packages/fs/fs-local': { role: 'provider', files: { 'index.ts': 'export default class LocalFs {}\n' } },
    'packages/fs/fs-other': {
      role: 'provider',
      deps: ['@dsh/session', '@dsh/fs-local'],
      files: {
        'index.ts': "import type {} from '@dsh/session'\nimport LocalFs from '@dsh/fs-local'\nexport default LocalFs\n",
      },
    },
  })
  const { status, output } = runGate(root)
  expect(status).toBe(1)
  expect(output).toContain('packages/fs/fs-other: a provider may not depend on @dsh/fs-local (a provider)')
  expect(output).not.toContain('@dsh/session (a service)')
})

test('the folders tell the layers: the ground stands on nothing above it, the model layer never imports the agent layer, and only the top stands on packages/boot', () => {
  const empty = { 'index.ts': 'export {}\n' }
  const root = workspace({
    'packages/ground/app': { role: 'definition', files: empty },
    'packages/ground/cmdline': { role: 'service', deps: ['@dsh/app', '@dsh/session'], files: empty },
    'packages/core/session': { role: 'service', deps: ['@dsh/app'], files: empty },
    'packages/llm/llm-retry': { role: 'plugin', deps: ['@dsh/session', '@dsh/app'], files: empty },
    'packages/boot/app-boot': { role: 'library', deps: ['@dsh/app'], files: empty },
    'packages/boot/helper': { role: 'service', files: empty },
    'packages/fs/fs-local': { role: 'provider', deps: ['@dsh/app-boot'], files: empty },
    'packages/boot/bundle-base': { role: 'bundle', deps: ['@dsh/app-boot', '@dsh/llm-retry'], files: empty },
  })
  const { status, output } = runGate(root)
  expect(status).toBe(1)
  expect(output).toContain(
    'packages/ground/cmdline: packages/ground/ may not depend on @dsh/session (packages/core/session/)',
  )
  expect(output).toContain(
    'packages/llm/llm-retry: packages/llm/ may not depend on @dsh/session (packages/core/session/)',
  )
  expect(output).toContain('packages/fs/fs-local: a provider may not depend on @dsh/app-boot (packages/boot/app-boot/)')
  expect(output).toContain('packages/boot/helper: a service does not belong in packages/boot/')
  // What the layering allows stays allowed: everyone on the ground, the bundle on the composer and plugins.
  expect(output).not.toContain('@dsh/app (')
  expect(output).not.toContain('packages/boot/bundle-base')
  expect(output).not.toContain('packages/boot/app-boot:')
})
