import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import type { Page } from 'playwright-core'
import type { MockServer } from '@dsh/llm-mock-server'
import { openWebApp, type WebApp, type WebProcess } from './test-support/web.ts'

// A subagent as the web shows it: the real `dsh --profile web` (mock model), Debian's Chromium.
const WAIT = { timeout: 40_000 }
let app: WebApp
let llm: MockServer
let web: WebProcess
let page: Page

beforeAll(async () => {
  app = await openWebApp({ patch: '- id: llm-retry\n  config: { maxRetries: 0 }\n' })
  ;({ llm, web, page } = app)
}, 60_000)

afterAll(() => app?.close())

test("a child agent is a card naming it and its status, linking the child's session", async () => {
  await page.getByRole('heading', { name: 'What should dsh work on?' }).waitFor(WAIT)
  llm.enqueue(
    {
      toolCalls: [
        { id: 't1', name: 'task', arguments: { description: 'count the files', prompt: 'Count the files here.' } },
      ],
    },
    { text: 'There are none.' },
    { text: 'The child says none.' },
  )
  await page.getByLabel('Message').fill('delegate the count')
  await page.getByLabel('Message').press('Enter')
  const card = page.getByTestId('subagent-card')
  await card.waitFor(WAIT)
  await expect.poll(() => card.getAttribute('data-status'), WAIT).toBe('completed')
  expect(await card.textContent()).toContain('count the files')
  expect(await card.textContent()).toContain('general')
  const child = await card.getAttribute('data-child')
  await page.locator('.msg-assistant', { hasText: 'The child says none.' }).waitFor(WAIT)
  await card.getByText('Open its session').click()
  await expect.poll(() => page.url(), WAIT).toContain(`/s/${child}`)
  await page.locator('[data-testid="user-message"]', { hasText: 'Count the files here.' }).waitFor(WAIT)
  await page.locator('.msg-assistant', { hasText: 'There are none.' }).waitFor(WAIT)
}, 60_000)

// Joins this file's web process (one per file keeps the suite's time): a command's card while it runs.
test('a running command shows each line in its card as it is printed, with a running timer, before it ends', async () => {
  await page.goto(`${web.origin}/`)
  await page.getByRole('heading', { name: 'What should dsh work on?' }).waitFor(WAIT)
  llm.enqueue(
    {
      toolCalls: [
        // The command waits for the test to see its first line (a loaded machine may take seconds to show it).
        {
          id: 'live',
          name: 'bash',
          arguments: { command: 'echo line 1; until [ -e go ]; do sleep 0.05; done; echo line 2; echo line 3' },
        },
      ],
    },
    { text: 'Printed three lines.' },
  )
  await page.getByLabel('Message').fill('print three lines slowly')
  await page.getByLabel('Message').press('Enter')
  const card = page.locator('[data-call-id="live"]')
  await card.getByTestId('tool-live-output').filter({ hasText: 'line 1' }).waitFor(WAIT)
  expect(await card.getAttribute('class')).toContain('status-running') // the first line is shown before the command ends
  expect(await card.getByTestId('tool-live-output').textContent()).not.toContain('line 3')
  await card.getByTestId('tool-elapsed').waitFor(WAIT)
  writeFileSync(join(web.workspace, 'go'), '')
  await page.locator('.msg-assistant', { hasText: 'Printed three lines.' }).waitFor(WAIT)
  expect(await card.getAttribute('class')).toContain('status-done')
  expect(await card.locator('.tool-output').textContent()).toContain('line 1\nline 2\nline 3')
}, 60_000)
