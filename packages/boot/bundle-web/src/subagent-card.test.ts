import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import type { Page } from 'playwright-core'
import type { MockServer } from '@dsh/llm-mock-server'
import { openWebApp, screenshot, type WebApp, type WebProcess } from './test-support/web.ts'

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

// Joins this file's web process (one per file keeps the suite's time).
test("a subagent's session is listed under its parent, folded until opened and named by the task's description; the call is one card", async () => {
  await page.goto(`${web.origin}/`)
  await page.getByRole('heading', { name: 'What should dsh work on?' }).waitFor(WAIT)
  llm.enqueue(
    {
      toolCalls: [
        {
          id: 'k1',
          name: 'task',
          arguments: { description: 'Count the files', prompt: 'Hidden instructions: list every file, then count.' },
        },
      ],
    },
    { text: 'Counted zero.' },
    { text: 'The count is zero.' },
  )
  await page.getByLabel('Message').fill('how many files are there')
  await page.getByLabel('Message').press('Enter')
  const card = page.getByTestId('subagent-card')
  await page.locator('.msg-assistant', { hasText: 'The count is zero.' }).waitFor(WAIT)
  const parent = new URL(page.url()).pathname.split('/').at(-1)!
  const child = (await card.getAttribute('data-child'))!
  // The parent's transcript: one card for the call (the subagent's), no raw `task` card beside it.
  expect(await page.locator('[data-call-id="k1"]').count()).toBe(1)
  expect(await page.locator('[data-call-id="k1"]').getAttribute('data-testid')).toBe('subagent-card')
  expect(await page.getByTestId('tool-task').count()).toBe(0)

  // The sidebar: the parent is a top-level row whose toggle folds the child; the child is no top-level row.
  const parentRow = page.locator('[data-testid="session-row"]', {
    has: page.locator(`> a[data-session-id="${parent}"]`),
  })
  const toggle = parentRow.locator('> [data-testid="subagents-toggle"]')
  await toggle.waitFor(WAIT) // the listing has the child once its `subagent/parent` is stored
  expect(await toggle.textContent()).toBe('1 subagent')
  expect(await toggle.getAttribute('aria-expanded')).toBe('false')
  expect(await page.locator(`a[data-session-id="${child}"]`).count()).toBe(0)
  const topLevel = page.locator('.session-group > ul > [data-testid="session-row"] > a')
  const topIds = await topLevel.evaluateAll((links) => links.map((link) => link.getAttribute('data-session-id')))
  expect(topIds).toContain(parent)
  expect(topIds).not.toContain(child)

  await toggle.click()
  const childLink = parentRow.locator(`[data-testid="session-children"] a[data-session-id="${child}"]`)
  await childLink.waitFor(WAIT)
  expect(await childLink.locator('.session-title').textContent()).toBe('Count the files')
  await screenshot(page, 'subagent-under-parent')
  // Opened, the child is named the same in its own page, and stays shown under its parent.
  await childLink.click()
  await expect.poll(() => page.url(), WAIT).toContain(`/s/${child}`)
  await page.locator('.msg-assistant', { hasText: 'Counted zero.' }).waitFor(WAIT)
  expect(await page.locator('.session-heading h2').textContent()).toBe('Count the files')
  expect(await childLink.getAttribute('class')).toContain('active')
  // At a phone size the drawer shows the same tree, the child's name whole within the screen.
  await page.setViewportSize({ width: 390, height: 844 })
  await page.getByLabel('Show sessions and settings').click()
  await expect
    .poll(async () => {
      const box = await childLink.boundingBox()
      return !!box && box.x >= 0 && box.x + box.width <= 390
    }, WAIT)
    .toBe(true)
  await screenshot(page, 'subagent-under-parent-390')
  await page.setViewportSize({ width: 1280, height: 860 })
}, 60_000)

// Joins this file's web process: a command's card while it runs.
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
