import { afterAll, beforeAll, expect, test } from 'vitest'
import type { Page } from 'playwright-core'
import type { MockServer } from '@dsh/llm-mock-server'
import { openWebApp, screenshot, type WebApp } from './test-support/web.ts'

// The agent's task list in the real `dsh --profile web` process, driven in Chromium: each todo_write the
// model makes shows in the panel above the composer, live.
const WAIT = { timeout: 40_000 }
let app: WebApp
let llm: MockServer
let page: Page

beforeAll(async () => {
  app = await openWebApp()
  ;({ llm, page } = app)
}, 60_000)

afterAll(() => app?.close())

const todo = (todos: unknown[]) => ({ toolCalls: [{ name: 'todo_write', arguments: { todos } }] })

test('each todo_write the model makes shows in the task panel, the latest list replacing the one before', async () => {
  await page.getByRole('heading', { name: 'What should dsh work on?' }).waitFor(WAIT)
  llm.enqueue(
    todo([
      { content: 'read the failing test', status: 'in_progress', priority: 'high' },
      { content: 'fix the parser', status: 'pending', priority: 'medium' },
    ]),
    todo([
      { content: 'read the failing test', status: 'completed', priority: 'high' },
      { content: 'fix the parser', status: 'in_progress', priority: 'medium' },
    ]),
    { text: 'Working on the parser now.' },
  )
  await page.getByLabel('Message').fill('fix the parser')
  await page.getByLabel('Message').press('Enter')
  const panel = page.getByTestId('todo-panel')
  await panel.locator('li[data-status="in_progress"]', { hasText: 'fix the parser' }).waitFor(WAIT)
  expect(
    await panel
      .locator('li')
      .evaluateAll((items) => items.map((item) => `${item.getAttribute('data-status')} ${item.textContent?.trim()}`)),
  ).toEqual(['completed read the failing testhigh', 'in_progress fix the parser'])
  expect(await panel.textContent()).toContain('1 of 2 done')
  await screenshot(page, 'todo-panel')
})
