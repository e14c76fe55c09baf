import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { bootComposition, type Harness } from '@dsh/test-harness'
import { signInWithLink } from '@dsh/webserver'

// A temp "home" holds the workspace; dsh is started in a launch folder outside it (as on a server, or from
// /srv); one more folder is named with --allow-root; a last one stands for the rest of the disk.
let h: Harness
let home: string
let launch: string
let extra: string
let outside: string
let cookie: string

beforeAll(async () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-picker-')))
  ;[home, launch, extra, outside] = ['home', 'launch', 'extra', 'outside'].map((name) => join(base, name))
  mkdirSync(join(home, 'work/src/app'), { recursive: true })
  mkdirSync(join(home, 'work/.git'))
  mkdirSync(join(home, 'work/docs'))
  writeFileSync(join(home, 'work/src/.git'), 'gitdir: ../.git/worktrees/src\n')
  mkdirSync(join(launch, 'proj'), { recursive: true })
  mkdirSync(join(extra, 'data'), { recursive: true })
  mkdirSync(outside)
  symlinkSync(outside, join(home, 'work/escape'))
  symlinkSync('/etc', join(home, 'etc-link'))
  symlinkSync(join(extra, 'data'), join(home, 'to-extra'))
  h = await bootComposition({
    profile: 'web',
    argv: ['--port', '0', '--allow-root', extra],
    workspace: launch,
    patch: `- id: webserver\n  config: { announce: false, open: false, home: '${home}' }\n`,
  })
  await h.root.webserver.start()
  cookie = await signInWithLink(h.root.webserver.newLink())
})
afterAll(async () => {
  await h?.dispose()
  rmSync(join(home, '..'), { recursive: true, force: true })
})

async function call(method: string, params: object) {
  const response = await fetch(`${h.root.webserver.url}/api/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie },
    body: JSON.stringify(params),
  })
  return (await response.json()) as any
}
const list = (path?: string) => call('files.list', path ? { path } : {})

test('started outside the home, the picker opens at the launch folder and names the home and every root', async () => {
  const { result } = await list()
  expect(result).toMatchObject({ path: launch, root: launch, home, roots: [home, launch, extra] })
  expect(result.parent).toBeUndefined()
  expect(result.entries.map((entry: { name: string }) => entry.name)).toEqual(['proj'])
})

test('Home (~) lists the home; hidden folders and links leading out of every root are left out', async () => {
  const { result } = await list('~')
  expect(result.path).toBe(home)
  expect(result.entries.map((entry: { name: string }) => entry.name)).toEqual(['to-extra', 'work'])
  expect((await list('~/work')).result.entries.map((entry: { name: string }) => entry.name)).toEqual(['docs', 'src'])
})

test('a folder holding .git (a folder, or the file of a worktree) is marked as a repository; others are not', async () => {
  const marks = (entries: { name: string; git?: boolean }[]) => entries.map((entry) => [entry.name, entry.git ?? false])
  expect(marks((await list('~')).result.entries)).toEqual([
    ['to-extra', false],
    ['work', true],
  ])
  expect(marks((await list('~/work')).result.entries)).toEqual([
    ['docs', false],
    ['src', true],
  ])
})

test('a folder named with --allow-root opens; /etc, a folder outside, and links to them are refused', async () => {
  expect((await list(join(extra, 'data'))).result.root).toBe(extra)
  expect((await list('/etc')).error).toMatchObject({
    code: 'BAD_PARAMS',
    message: expect.stringContaining('outside the folders the web app may open'),
  })
  expect((await list(outside)).error.code).toBe('BAD_PARAMS')
  expect((await list(join(home, 'etc-link'))).error).toMatchObject({
    code: 'BAD_PARAMS',
    message: expect.stringContaining('really /etc'),
  })
  expect((await list(join(home, 'work/escape'))).error.code).toBe('BAD_PARAMS')
  expect((await list(join(home, 'nope'))).error.code).toBe('NOT_FOUND')
})

test('a session is created only inside the roots: /etc and a symlink to it are refused, nothing is logged', async () => {
  const before = (await h.root.sessions.list()).length
  for (const cwd of ['/etc', join(home, 'etc-link'), outside])
    expect((await call('sessions.create', { cwd })).error).toMatchObject({
      code: 'BAD_PARAMS',
      message: expect.stringContaining('outside'),
    })
  expect((await h.root.sessions.list()).length).toBe(before)
  const created = await call('sessions.create', { cwd: join(home, 'work') })
  expect(created.result.sessionId).toEqual(expect.any(String))
})

test('an --allow-root that does not exist stops the launch with a usage error naming it', async () => {
  await expect(
    bootComposition({
      profile: 'web',
      argv: ['--port', '0', '--allow-root', join(outside, 'missing')],
      workspace: launch,
      patch: `- id: webserver\n  config: { announce: false, open: false, home: '${home}' }\n`,
    }),
  ).rejects.toThrow(/--allow-root .*missing does not exist/)
})
