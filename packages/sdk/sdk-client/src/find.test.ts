import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, test } from 'vitest'
import { findRuntime, repositoryLauncher } from './find.ts'

// The same order as the Python SDK (python/sdk/dsh/runtime.py): command, DSH_BIN, dsh on PATH, checkout.
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

test('without DSH_BIN, dsh on PATH, then the checkout launcher', () => {
  expect(findRuntime(undefined, { PATH: dir })).toEqual({ file: onPath, args: [] })
  expect(findRuntime(undefined, { PATH: '' })).toEqual({ file: process.execPath, args: [repositoryLauncher] })
})
