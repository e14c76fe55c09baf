import { afterAll, beforeAll, expect, test } from 'vitest'
import type { Browser, Page } from 'playwright-core'
import type { MockServer } from '@dsh/llm-mock-server'
import {
  adoptBrowserSignIn,
  api,
  openWebApp,
  removeHome,
  screenshot,
  startWeb,
  type WebProcess,
} from './test-support/web.ts'

// dsh web stopped while a turn runs, and started again on the same home and port: the real `dsh --profile web`
// (mock model), Debian's Chromium.
const WAIT = { timeout: 40_000 }
let llm: MockServer
let web: WebProcess
let browser: Browser
let page: Page

beforeAll(async () => {
  ;({ llm, web, browser, page } = await openWebApp({ patch: '- id: llm-retry\n  config: { maxRetries: 0 }\n' }))
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await web?.stop()
  await llm?.close()
  if (web) removeHome(web)
})

test('a turn running when dsh web stops shows "interrupted (dsh stopped)" at once, and after a restart offers Continue', async () => {
  llm.enqueue({ toolCalls: [{ id: 'long', name: 'bash', arguments: { command: 'sleep 30' } }] })
  await page.goto(`${web.origin}/`)
  await page.getByRole('heading', { name: 'What should dsh work on?' }).waitFor(WAIT)
  await page.getByLabel('Message').fill('wait for a long time')
  await page.getByLabel('Message').press('Enter')
  const card = page.locator('[data-call-id="long"]')
  await card.getByTestId('tool-elapsed').waitFor(WAIT)
  const sessionId = new URL(page.url()).pathname.split('/').at(-1)!

  // Stopped (SIGTERM): the tab loses the stream, and the card stops spinning at once.
  const port = new URL(web.origin).port
  await web.stop()
  await expect
    .poll(
      () =>
        card
          .getByTestId('status-interrupted')
          .textContent()
          .then((text) => text?.trim()),
      WAIT,
    )
    .toBe('interrupted (dsh stopped)')
  expect(await card.locator('.spin').count()).toBe(0)
  expect(await card.getByTestId('tool-elapsed').count()).toBe(0)
  await expect.poll(() => page.getByTestId('session-status').textContent(), WAIT).not.toContain('running')
  await page.getByText('dsh is not answering; reconnecting…').waitFor(WAIT)
  await screenshot(page, 'stopped-offline')

  // Started again on the same home and port: the tab reconnects by itself and reads what the stop logged.
  web = await startWeb({
    home: web.home,
    workspace: web.workspace,
    args: ['--port', port],
    env: { DEEPSEEK_BASE_URL: llm.url, DEEPSEEK_API_KEY: 'test' },
  })
  const ending = page.locator('[data-testid="turn-end"]')
  await expect.poll(() => ending.getAttribute('data-reason'), WAIT).toBe('interrupted')
  expect(await ending.textContent()).toContain('Interrupted: dsh stopped during this turn')
  expect(await ending.textContent()).not.toContain('Cancelled')
  expect((await card.getByTestId('status-interrupted').textContent())?.trim()).toBe('interrupted (dsh stopped)')
  await adoptBrowserSignIn(web, page.context())
  const { events } = await api<{ events: { type: string; data: any }[] }>(web, 'sessions.page', { sessionId })
  expect(events.filter((event) => event.type === 'turn/end').map((event) => event.data.reason)).toEqual(['interrupted'])
  // What the model reads when it continues: dsh stopped the command, nobody cancelled it.
  const result = events.find((event) => event.type === 'tool/result')!
  expect(result.data.error.message).toBe('Interrupted: dsh stopped and the command was killed (SIGTERM).')
  await screenshot(page, 'stopped-continue')

  llm.enqueue({ text: 'Carrying on from where it stopped.' })
  await page.getByTestId('continue-turn').click()
  await page.locator('.msg-assistant', { hasText: 'Carrying on from where it stopped.' }).waitFor(WAIT)
  expect(await page.locator('.msg-user').last().textContent()).toContain('Continue.')
  expect(await page.getByTestId('continue-turn').count()).toBe(0)
}, 60_000)
