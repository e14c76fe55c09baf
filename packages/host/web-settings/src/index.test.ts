import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { bootComposition, type Harness } from '@dsh/test-harness'
import { signInWithLink } from '@dsh/webserver'

let h: Harness
let cookie: string
beforeAll(async () => {
  h = await bootComposition({
    profile: 'web',
    argv: ['--port', '0'],
    patch: `- id: webserver\n  config: { announce: false, open: false }\n`,
  })
  await h.root.webserver.start()
  cookie = await signInWithLink(h.root.webserver.newLink())
})
afterAll(() => h?.dispose())

async function call(method: string, params: unknown = {}) {
  const response = await fetch(`${h.root.webserver.url}/api/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie },
    body: JSON.stringify(params),
  })
  return { status: response.status, text: await response.clone().text(), ...((await response.json()) as any) }
}

test('a key saved from the page lands in the credentials file, and no answer ever carries it', async () => {
  const saved = await call('credentials.set', { name: 'DEEPSEEK_API_KEY', value: 'sk-web-secret-123' })
  expect(saved.result.credential).toMatchObject({
    name: 'DEEPSEEK_API_KEY',
    provider: 'deepseek',
    set: true,
    source: 'home-file',
  })
  expect(saved.text).not.toContain('sk-web-secret-123')
  const listed = await call('credentials.list')
  expect(listed.text).not.toContain('sk-web-secret-123')
  const file = join(h.home, '.credentials.yaml')
  expect(readFileSync(file, 'utf8')).toContain('sk-web-secret-123')
  expect(statSync(file).mode & 0o777).toBe(0o600)
  const removed = await call('credentials.remove', { name: 'DEEPSEEK_API_KEY' })
  expect(removed.result.credential).toMatchObject({ set: false, source: 'missing' })
})

test('only the keys the row names can be written', async () => {
  const refused = await call('credentials.set', { name: 'PATH', value: '/tmp/evil' })
  expect(refused.error).toMatchObject({ code: 'BAD_PARAMS', message: expect.stringContaining('DEEPSEEK_API_KEY') })
})

test('a setting is validated, saved to settings.yaml and reset', async () => {
  const bad = await call('settings.set', { key: 'web.defaultPreset', value: 'yolo' })
  expect(bad.ok).toBe(false)
  const good = await call('settings.set', { key: 'web.defaultPreset', value: 'read-only' })
  expect(good.result.setting).toMatchObject({ key: 'web.defaultPreset', value: 'read-only', source: 'file' })
  expect(readFileSync(join(h.home, 'settings.yaml'), 'utf8')).toContain('web.defaultPreset: read-only')
  const reset = await call('settings.reset', { key: 'web.defaultPreset' })
  expect(reset.result.setting).toMatchObject({ value: '', source: 'default' })
  expect((await call('settings.set', { key: 'no.such.key', value: 1 })).error.code).toBe('NOT_FOUND')
})

test('the composition lists every row with the layers that set it', async () => {
  const { result } = await call('composition.get')
  expect(result.header[0]).toMatch(/profile web/)
  const webserver = result.rows.find((row: { id: string }) => row.id === 'webserver')
  expect(webserver).toMatchObject({ name: '@dsh/webserver', config: { announce: false, open: false } })
  expect(webserver.setBy).toEqual([
    expect.stringMatching(/^bundle @dsh\/bundle-web:\d+ \(insert, name\)$/),
    expect.stringMatching(/test\.patch\.yml:\d+ \(config\)$/),
  ])
  expect(result.rows.find((row: { id: string }) => row.id === 'logger').setBy).toEqual([
    expect.stringMatching(/^bundle @dsh\/bundle-base:\d+/),
  ])
  expect(result.text).toBe(h.root.app.dumpConfig())
})
