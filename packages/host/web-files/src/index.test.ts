import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { bootComposition, type Harness } from '@dsh/test-harness'
import { signInWithLink } from '@dsh/webserver'

// The picker's root is a temp "home" holding the workspace; a folder beside it stands for the rest of the disk.
let h: Harness
let outside: string
let cookie: string
let root: string

beforeAll(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-picker-')))
  outside = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-outside-')))
  const workspace = join(root, 'work')
  mkdirSync(join(workspace, 'src/app'), { recursive: true })
  mkdirSync(join(workspace, '.git'))
  mkdirSync(join(workspace, 'docs'))
  symlinkSync(outside, join(workspace, 'escape'))
  h = await bootComposition({
    profile: 'web',
    argv: ['--port', '0'],
    workspace,
    patch: `- id: webserver\n  config: { announce: false, open: false }\n- id: web-files\n  config: { root: '${root}' }\n`,
  })
  await h.root.webserver.start()
  cookie = await signInWithLink(h.root.webserver.newLink())
})
afterAll(async () => {
  await h?.dispose()
  rmSync(root, { recursive: true, force: true })
  rmSync(outside, { recursive: true, force: true })
})

async function list(path?: string) {
  const response = await fetch(`${h.root.webserver.url}/api/files.list`, { method: 'POST', headers: { 'content-type': 'application/json', cookie }, body: JSON.stringify(path ? { path } : {}) })
  return (await response.json()) as any
}

test('the picker opens at the launch folder and lists its folders, hidden ones and escaping links left out', async () => {
  const { result } = await list()
  expect(result.path).toBe(join(root, 'work'))
  expect(result.parent).toBe(root)
  expect(result.entries.map((entry: { name: string }) => entry.name)).toEqual(['docs', 'src'])
})

test('a folder outside the root is refused, also through a symlink', async () => {
  expect((await list(outside)).error.code).toBe('BAD_PARAMS')
  expect((await list(join(root, 'work/escape'))).error).toMatchObject({ code: 'BAD_PARAMS', message: expect.stringContaining('outside') })
  expect((await list(join(root, 'nope'))).error.code).toBe('NOT_FOUND')
})
