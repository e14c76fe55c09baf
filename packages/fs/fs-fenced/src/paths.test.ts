import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { Context } from '@dsh/cordis'
import { type Fs, FsError, FsIoConfig } from '@dsh/fs'
import type { PathRule, SandboxAuthority } from '@dsh/sandbox'
import FencedFs from './index.ts'

let base: string
let ws: string
let secrets: string
let fs: Fs
let authority: SandboxAuthority

const rule = (written: string, pattern: string): PathRule => ({ rule: written, pattern })

beforeEach(async () => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-fs-paths-')))
  ws = join(base, 'ws')
  secrets = join(base, 'secrets')
  mkdirSync(join(ws, '.git/hooks'), { recursive: true })
  mkdirSync(join(secrets, 'spill'), { recursive: true })
  writeFileSync(join(ws, '.git/config'), '[core]\n')
  writeFileSync(join(ws, 'main.ts'), 'code\n')
  writeFileSync(join(secrets, 'key'), 'KEY\n')
  writeFileSync(join(secrets, 'spill/out.txt'), 'spilled\n')
  authority = {
    mode: 'workspace-write',
    writableRoots: [ws],
    paths: {
      denyRead: [rule('~/secrets', secrets)],
      readExceptions: [join(secrets, 'spill')],
      protect: [rule('.git', join(ws, '.git')), rule('.dsh/', join(ws, '.dsh'))],
    },
  }
  const root = new Context()
  await root.plugin(FencedFs, FsIoConfig({ fsync: false }))
  fs = root.fs
})

afterEach(() => rmSync(base, { recursive: true, force: true }))

async function failure(promise: Promise<unknown>, code: string): Promise<FsError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(FsError)
  expect((error as FsError).code).toBe(code)
  return error as FsError
}

test('a read carrying the authority is refused on a secret path and through a link to one; a read exception is readable', async () => {
  symlinkSync(join(secrets, 'key'), join(ws, 'alias'))
  const error = await failure(fs.readText(join(secrets, 'key'), { authority }), 'FS_READ_DENIED')
  expect(error.message).toBe(
    `"${join(secrets, 'key')}" is a secret path (rule ~/secrets): file tools never read it and confined commands cannot see it`,
  )
  expect(error.fence).toEqual({ reason: 'secret', rule: '~/secrets' })
  await failure(fs.readBytes(join(ws, 'alias'), { authority }), 'FS_READ_DENIED')
  await failure(fs.isBinary(join(ws, 'alias'), { authority }), 'FS_READ_DENIED')
  expect((await fs.readText(join(secrets, 'spill/out.txt'), { authority })).text).toBe('spilled\n')
  // dsh's own reads carry no authority and are not fenced.
  expect((await fs.readText(join(secrets, 'key'))).text).toBe('KEY\n')
})

test('a walk or listing from above a secret folder leaves it out; one of the secret folder itself is refused', async () => {
  const walked: string[] = []
  for await (const entry of fs.walk(base, { authority })) walked.push(entry.relativePath)
  expect(walked).toContain('ws/main.ts')
  expect(walked.filter((path) => path.startsWith('secrets'))).toEqual([])
  expect((await fs.list(base, { authority })).map((entry) => entry.name)).toEqual(['ws'])
  await failure(fs.list(secrets, { authority }), 'FS_READ_DENIED')
})

test('writes onto protected paths are refused by rule, also a missing one and a remove or rename of what holds one', async () => {
  const hook = await failure(
    fs.writeFile(join(ws, '.git/hooks/post-commit'), '#!/bin/sh\n', { authority }),
    'FS_PROTECTED',
  )
  expect(hook.fence).toEqual({ reason: 'protected', rule: '.git' })
  await failure(fs.replaceFile(join(ws, '.git/config'), '[core]\n\tfsmonitor = x\n', { authority }), 'FS_PROTECTED')
  await failure(fs.mkdir(join(ws, '.dsh'), { authority }), 'FS_PROTECTED')
  await failure(fs.remove(join(ws, '.git'), { authority, recursive: true }), 'FS_PROTECTED')
  await failure(fs.rename(join(ws, 'main.ts'), join(ws, '.git/hooks/pre-commit'), { authority }), 'FS_PROTECTED')
  expect(existsSync(join(ws, '.git/hooks/post-commit'))).toBe(false)
  expect(existsSync(join(ws, '.dsh'))).toBe(false)
  expect(readFileSync(join(ws, '.git/config'), 'utf8')).toBe('[core]\n')
  await fs.writeFile(join(ws, 'AGENTS.md'), '# ok\n', { authority })
  expect(readFileSync(join(ws, 'AGENTS.md'), 'utf8')).toBe('# ok\n')
})

test('a secret path is never written, not even when it lies under a writable root', async () => {
  const widened: SandboxAuthority = { ...authority, writableRoots: [ws, secrets] }
  const error = await failure(
    fs.writeFile(join(secrets, 'spill/out.txt'), 'x', { authority: widened }),
    'FS_SANDBOX_DENIED',
  )
  expect(error.fence).toEqual({ reason: 'secret', rule: '~/secrets' })
  expect(readFileSync(join(secrets, 'spill/out.txt'), 'utf8')).toBe('spilled\n')
})

test('checkWrite reports the refusal a write would meet, changing nothing', async () => {
  expect((await failure(fs.checkWrite(join(base, 'elsewhere.txt'), authority), 'FS_SANDBOX_DENIED')).fence).toEqual({
    reason: 'outside',
  })
  await failure(fs.checkWrite(join(ws, '.git/HEAD'), authority), 'FS_PROTECTED')
  await expect(fs.checkWrite(join(ws, 'new.txt'), authority)).resolves.toBeUndefined()
  expect(existsSync(join(ws, 'new.txt'))).toBe(false)
})
