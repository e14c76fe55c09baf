import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, test } from 'vitest'
import { findRuntime, repositoryLauncher, siblingLauncher } from './find.ts'

// The Python SDK's order (python/sdk/dsh/runtime.py: command, DSH_BIN, dsh on PATH, checkout), with the `dsh`
// package installed beside the SDK between DSH_BIN and PATH.
const dir = mkdtempSync(join(tmpdir(), 'dsh-sdk-find-'))
const onPath = join(dir, 'dsh')
writeFileSync(onPath, '#!/bin/sh\n')
chmodSync(onPath, 0o755)
const script = join(dir, 'launcher.mjs')
writeFileSync(script, '')
afterAll(() => rmSync(dir, { recursive: true, force: true }))

test('a given command wins over DSH_BIN and PATH', () => {
  expect(findRuntime([onPath, '--flag'], { DSH_BIN: script, PATH: dir })).toEqual({ file: onPath, args: ['--flag'] })
})

test('DSH_BIN wins over dsh on PATH; a launcher script runs under this Node', () => {
  expect(findRuntime(undefined, { DSH_BIN: script, PATH: dir })).toEqual({ file: process.execPath, args: [script] })
  expect(findRuntime(undefined, { DSH_BIN: onPath, PATH: '' })).toEqual({ file: onPath, args: [] })
})

test('a DSH_BIN that does not exist is RUNTIME_NOT_FOUND naming it, not a silent fallback to PATH', () => {
  const missing = join(dir, 'gone')
  expect(() => findRuntime(undefined, { DSH_BIN: missing, PATH: dir })).toThrow(
    expect.objectContaining({ code: 'RUNTIME_NOT_FOUND', message: expect.stringContaining(missing) }),
  )
})

/** No `dsh` package resolves (as in this checkout, where the launcher is `@dsh/cli`). */
const nothing = (specifier: string): string => {
  throw Object.assign(new Error(`Cannot find module '${specifier}'`), { code: 'MODULE_NOT_FOUND' })
}

test('without DSH_BIN, dsh on PATH, then the checkout launcher', () => {
  expect(findRuntime(undefined, { PATH: dir }, { resolve: nothing })).toEqual({ file: onPath, args: [] })
  expect(findRuntime(undefined, { PATH: '' }, { resolve: nothing })).toEqual({
    file: process.execPath,
    args: [repositoryLauncher],
  })
})

test('a dsh package installed beside the SDK is found by module resolution, before PATH, without DSH_BIN', () => {
  // A project as `npm i dsh @dsh/sdk` leaves it: node_modules/dsh with its launcher, the SDK resolving from beside it.
  const project = join(dir, 'project')
  const launcher = join(project, 'node_modules/dsh/bin/dsh.js')
  mkdirSync(join(project, 'node_modules/dsh/bin'), { recursive: true })
  writeFileSync(
    join(project, 'node_modules/dsh/package.json'),
    JSON.stringify({ name: 'dsh', bin: { dsh: './bin/dsh.js' } }),
  )
  writeFileSync(launcher, '')
  const fromSdk = createRequire(join(project, 'node_modules/@dsh/sdk/dist/index.mjs')).resolve
  expect(siblingLauncher(fromSdk)).toBe(launcher)
  expect(findRuntime(undefined, { PATH: dir }, { resolve: fromSdk })).toEqual({
    file: process.execPath,
    args: [launcher],
  })
  expect(findRuntime(undefined, { DSH_BIN: onPath, PATH: dir }, { resolve: fromSdk })).toEqual({
    file: onPath,
    args: [],
  })
  // Another package named in node_modules/dsh, or one without a launcher, is not taken for the runtime.
  writeFileSync(join(project, 'node_modules/dsh/package.json'), JSON.stringify({ name: 'dsh' }))
  expect(siblingLauncher(fromSdk)).toBeUndefined()
})

test('found nowhere: the message names only places that can hold a runtime', () => {
  // Installed from the tarball, the SDK's checkout path points into a folder that is no checkout: not named.
  const outside = join(dir, 'project/apps/cli/bin/dsh.js')
  expect(() => findRuntime(undefined, { PATH: '' }, { resolve: nothing, checkoutLauncher: outside })).toThrow(
    expect.objectContaining({
      code: 'RUNTIME_NOT_FOUND',
      message:
        'cannot find the dsh runtime: DSH_BIN is not set, no "dsh" package resolves from the SDK (npm i dsh beside @dsh/sdk), no "dsh" on PATH; install dsh or pass { command: [...] }',
    }),
  )
  // In a checkout whose launcher is not built yet, the launcher it would use is named with the fix.
  const checkout = join(dir, 'checkout')
  mkdirSync(join(checkout, 'apps/cli'), { recursive: true })
  writeFileSync(join(checkout, 'apps/cli/package.json'), '{}')
  const unbuilt = join(checkout, 'apps/cli/bin/dsh.js')
  expect(() => findRuntime(undefined, { PATH: '' }, { resolve: nothing, checkoutLauncher: unbuilt })).toThrow(
    `no launcher at ${unbuilt} (run npm run setup)`,
  )
})
