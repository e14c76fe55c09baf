import { execFileSync } from 'node:child_process'
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import type { BrowserContext } from 'playwright-core'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import { signInWithLink } from '@dsh/webserver'
import {
  adoptBrowserSignIn,
  api,
  launchBrowserWithProfile,
  removeHome,
  startWeb,
  type WebProcess,
} from './test-support/web.ts'

// What a prompt-injected model could read afterwards: the browser's profile on disk and dsh's own files.
// The printed link is opened in Chromium on a fresh profile, the app is used in two tabs, the browser is
// closed, and then the profile, the logs and the output are searched for the link's code and the cookie.
const WAIT = { timeout: 40_000 }

let llm: MockServer
let web: WebProcess
let profile: string
let context: BrowserContext | undefined
let code: string
let secret: string

/** Every file under `dir`, with its bytes as latin1 text (so a secret in a binary file is still found). */
function filesUnder(dir: string): { path: string; text: string }[] {
  return readdirSync(dir, { recursive: true })
    .map((name) => join(dir, String(name)))
    .filter((path) => statSync(path, { throwIfNoEntry: false })?.isFile())
    .map((path) => ({ path, text: readFileSync(path).toString('latin1') }))
}

/** The whole History database as SQL text, read from a copy (Chromium may hold a lock on the original). */
function historyDump(): string {
  const copy = join(profile, '..', 'History.copy')
  copyFileSync(join(profile, 'Default', 'History'), copy)
  try {
    return execFileSync('sqlite3', [copy, '.dump'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
  } catch (error) {
    throw new Error(
      `could not read Chromium's History with the sqlite3 CLI (apt-get install sqlite3): ${(error as Error).message}`,
      { cause: error },
    )
  }
}

beforeAll(async () => {
  llm = await startMockServer()
  web = await startWeb({ env: { DEEPSEEK_BASE_URL: llm.url, DEEPSEEK_API_KEY: 'test' } })
  profile = join(mkdtempSync(join(tmpdir(), 'dsh-chromium-')), 'profile')
  context = await launchBrowserWithProfile(profile)
  const page = context.pages()[0] ?? (await context.newPage())
  await page.goto(web.link)
  await page.getByRole('heading', { name: 'What should dsh work on?' }).waitFor(WAIT)
  await adoptBrowserSignIn(web, context)
  code = decodeURIComponent(new URL(web.link).password)
  secret = web.cookie!.slice(web.cookie!.indexOf('=') + 1)

  llm.enqueue({ text: 'Hello from the mock model.' })
  await page.getByLabel('Message').fill('Say hello')
  await page.getByLabel('Message').press('Enter')
  await page.waitForURL(/\/s\/[\w-]+$/, WAIT)
  await page.locator('[data-testid="turn-end"]').first().waitFor(WAIT)
  // A second tab of the same browser needs no new link.
  const second = await context.newPage()
  await second.goto(`${web.origin}${new URL(page.url()).pathname}`)
  await second.locator('.msg-assistant', { hasText: 'Hello from the mock model.' }).waitFor(WAIT)
  await context.close()
  context = undefined
}, 90_000)

afterAll(async () => {
  await context?.close()
  await web?.stop()
  await llm?.close()
  if (web) removeHome(web)
  if (profile) rmSync(join(profile, '..'), { recursive: true, force: true })
})

test("Chromium's History holds the app's URLs but neither the link's code nor the sign-in secret", () => {
  const dump = historyDump()
  expect(dump).toContain(`${web.origin}/s/`)
  expect(dump).toContain(`${web.origin}/auth/link`)
  expect(dump).not.toContain(code)
  expect(dump).not.toContain(secret)
})

// Session restore keeps each tab's first request URL, the link with its code: that copy is spent (see the
// next test), and it is the only one.
test('the profile holds the code only in session restore, and the secret only in the cookie jar', () => {
  const files = filesUnder(profile)
  expect(files.length).toBeGreaterThan(10)
  expect(
    files
      .filter((file) => file.text.includes(code) && !/[/\\]Sessions[/\\](Session|Tabs)_\d+$/.test(file.path))
      .map((file) => file.path),
  ).toEqual([])
  expect(
    files
      .filter((file) => file.text.includes(secret) && !/[/\\]Cookies(-journal)?$/.test(file.path))
      .map((file) => file.path),
  ).toEqual([])
})

test('the used link is refused with a page saying so', async () => {
  await expect(signInWithLink(web.link)).rejects.toThrow(
    /\(403\):[\s\S]*this link was used; run <code>dsh web<\/code> again, or press Enter in the terminal running it, for a new link/,
  )
})

test('a request without the cookie is refused, the page and the API alike', async () => {
  const page = await fetch(`${web.origin}/`)
  expect(page.status).toBe(401)
  expect(await page.text()).toContain('not signed in')
  const call = await fetch(`${web.origin}/api/sessions.list`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: '{}',
  })
  expect(call.status).toBe(401)
  expect(((await call.json()) as { error: { code: string } }).error.code).toBe('SIGN_IN_REQUIRED')
  expect((await api(web, 'sessions.list')).sessions).toHaveLength(1)
})

test("the secret is in no output line and no file of dsh's home; the code only in the printed link", () => {
  expect(web.stdout()).not.toContain(secret)
  expect(
    web
      .stdout()
      .split('\n')
      .filter((line) => line.includes(code)),
  ).toEqual([`dsh web is running at ${web.link}`])
  expect(web.stderr()).not.toContain(secret)
  expect(web.stderr()).not.toContain(code)
  const files = filesUnder(web.home)
  expect(files.length).toBeGreaterThan(0)
  expect(
    files.filter((file) => file.text.includes(secret) || file.text.includes(code)).map((file) => file.path),
  ).toEqual([])
})
