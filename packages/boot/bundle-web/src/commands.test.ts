// Slash commands in the web app, in Debian's Chromium: the composer completes on `/` and a Claude Code
// command from `.claude/commands/` runs with its argument (the real `dsh --profile web`, the mock model).
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import type { Page } from 'playwright-core'
import type { MockServer } from '@dsh/llm-mock-server'
import { api, openWebApp, screenshot, type WebApp, type WebProcess } from './test-support/web.ts'

const WAIT = { timeout: 40_000 }
let app: WebApp
let llm: MockServer
let web: WebProcess
let page: Page
let sessionId: string

beforeAll(async () => {
  app = await openWebApp({
    prepare: (folders) => {
      mkdirSync(join(folders.workspace, '.claude/commands'), { recursive: true })
      writeFileSync(
        join(folders.workspace, '.claude/commands/greet.md'),
        '---\ndescription: Greet someone by name\nargument-hint: <name>\n---\nSay hello to $1, politely.\n',
      )
    },
  })
  ;({ llm, web, page } = app)
  sessionId = (await api(web, 'sessions.create', { cwd: web.workspace })).sessionId
  await page.goto(`${web.origin}/s/${sessionId}`)
  await page.getByLabel('Message').waitFor(WAIT)
}, 60_000)

afterAll(() => app?.close())

test('typing / offers the commands; picking the user command and giving its argument runs it as the prompt', async () => {
  const box = page.getByLabel('Message')
  await box.fill('/gr')
  const menu = page.getByRole('listbox', { name: 'Commands' })
  await menu.getByRole('option').first().waitFor(WAIT)
  expect(await menu.getByRole('option').allTextContents()).toEqual(['/greet<name>Greet someone by name'])
  await screenshot(page, 'commands-01-completion')
  await box.press('Tab')
  expect(await box.inputValue()).toBe('/greet ')
  llm.enqueue({ text: 'Hello, Ada.' })
  await box.pressSequentially('Ada')
  await box.press('Enter')
  await page.locator('[data-testid="turn-end"]').first().waitFor(WAIT)
  expect(llm.requests.at(-1)!.body.messages.at(-1)).toMatchObject({
    role: 'user',
    content: 'Say hello to Ada, politely.',
  })
  await page.getByText('Hello, Ada.').waitFor(WAIT)
})

test('a built-in shows its output without a model request, and an unknown /word goes as text with a notice', async () => {
  const box = page.getByLabel('Message')
  await box.fill('/')
  expect(await page.getByRole('listbox', { name: 'Commands' }).getByRole('option').count()).toBeGreaterThanOrEqual(8)
  const before = llm.requests.length
  await box.fill('/cost')
  await box.press('Enter')
  await expect
    .poll(async () => (await page.getByTestId('command-output').textContent()) ?? '', WAIT)
    .toContain('model request')
  expect(llm.requests.length).toBe(before)
  llm.enqueue({ text: 'Not a command.' })
  await box.fill('/nosuch thing')
  await box.press('Enter')
  await expect
    .poll(async () => (await page.getByTestId('command-output').textContent()) ?? '', WAIT)
    .toContain('/nosuch is not a command here: it was sent to the model as text')
  await expect.poll(() => llm.requests.length, WAIT).toBe(before + 1)
  expect(llm.requests.at(-1)!.body.messages.at(-1)).toMatchObject({ role: 'user', content: '/nosuch thing' })
  await screenshot(page, 'commands-02-unknown')
})
