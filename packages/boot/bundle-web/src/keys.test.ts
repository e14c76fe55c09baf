import { afterAll, afterEach, beforeAll, expect, test } from 'vitest'
import type { Page } from 'playwright-core'
import type { MockServer } from '@dsh/llm-mock-server'
import { openWebApp, screenshot, type WebApp, type WebProcess } from './test-support/web.ts'

// The keyboard and the clock of a running turn as the web shows them: the real `dsh --profile web` (mock
// model), Debian's Chromium.
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
afterEach(() => llm.reset())

const bash = (id: string, command: string, extra: Record<string, unknown> = {}) => ({
  id,
  name: 'bash',
  arguments: { command, ...extra },
})

async function start(text: string): Promise<void> {
  await page.goto(`${web.origin}/`)
  await page.getByRole('heading', { name: 'What should dsh work on?' }).waitFor(WAIT)
  await page.getByLabel('Message').fill(text)
  await page.getByLabel('Message').press('Enter')
}

/** The whole seconds a running card's clock shows (`0 s`, `2 s`), once it shows one. */
async function seconds(page: Page, callId: string): Promise<number> {
  const text = (await page.locator(`[data-call-id="${callId}"] [data-testid="tool-elapsed"]`).textContent()) ?? ''
  const match = /^(\d+) s$/.exec(text.trim())
  return match ? Number(match[1]) : -1
}

test('Esc closes the open Changes panel first, and a second Esc cancels the running turn as Stop does', async () => {
  llm.enqueue({ toolCalls: [bash('slow', 'sleep 30')] })
  await start('wait a while')
  const card = page.locator('[data-call-id="slow"]')
  await card.getByTestId('tool-elapsed').waitFor(WAIT)
  await page.getByTestId('changes-toggle').click()
  await page.getByRole('button', { name: 'Close changes' }).waitFor(WAIT)
  await page.getByLabel('Message').focus()

  await page.keyboard.press('Escape')
  await page.getByRole('button', { name: 'Close changes' }).waitFor({ state: 'detached', ...WAIT })
  // A cancel sent with that Esc would have ended the turn before the clock ticks on by two seconds.
  const closedAt = await seconds(page, 'slow')
  await expect.poll(() => seconds(page, 'slow'), WAIT).toBeGreaterThanOrEqual(closedAt + 2)
  expect(await page.getByTestId('turn-end').count()).toBe(0)
  expect(await page.getByTestId('session-status').textContent()).toContain('running')

  await page.keyboard.press('Escape')
  await page.locator('[data-testid="turn-end"][data-reason="aborted"]').waitFor(WAIT)
  await expect.poll(() => page.getByTestId('session-status').textContent(), WAIT).toBe('idle')
  expect(await card.getByTestId('tool-elapsed').count()).toBe(0)
}, 60_000)

test('Esc with an approval waiting rejects that call and the turn goes on, even from the message box', async () => {
  llm.enqueue(
    {
      toolCalls: [
        bash('ask', 'echo no > esc-rejected.txt', {
          sandbox: false,
          justification: 'It must run unconfined to ask for approval.',
        }),
      ],
    },
    { text: 'It was not run.' },
  )
  await start('write a file outside the sandbox')
  await page.getByTestId('approval-banner').waitFor(WAIT)
  await page.getByLabel('Message').focus()
  await page.keyboard.press('Escape')
  await page.locator('.msg-assistant', { hasText: 'It was not run.' }).waitFor(WAIT)
  expect(await page.locator('[data-testid="turn-end"]').getAttribute('data-reason')).toBe('completed')
  expect(await page.getByTestId('approval-decided').last().textContent()).toContain('Rejected by you')
}, 60_000)

test('Esc in the message box with the command list open closes the list and leaves the text', async () => {
  llm.enqueue({ toolCalls: [bash('slow2', 'sleep 30')] })
  await start('wait again')
  await page.locator('[data-call-id="slow2"] [data-testid="tool-elapsed"]').waitFor(WAIT)
  const box = page.getByLabel('Message')
  await box.fill('/')
  await page.locator('.command-menu').waitFor(WAIT)
  await box.press('Escape')
  await page.locator('.command-menu').waitFor({ state: 'detached', ...WAIT })
  expect(await box.inputValue()).toBe('/')
  expect(await page.getByTestId('session-status').textContent()).toContain('running')
  await box.press('Escape')
  await page.locator('[data-testid="turn-end"][data-reason="aborted"]').waitFor(WAIT)
  await screenshot(page, 'esc-cancelled')
}, 60_000)

test('a running command that prints nothing shows its clock moving from 0 s to 2 s and more', async () => {
  llm.enqueue({ toolCalls: [bash('quiet', 'sleep 4')] }, { text: 'Slept.' })
  await start('sleep quietly')
  const card = page.locator('[data-call-id="quiet"]')
  await card.getByTestId('tool-elapsed').waitFor(WAIT)
  expect(await seconds(page, 'quiet')).toBeLessThanOrEqual(1)
  await expect.poll(() => seconds(page, 'quiet'), WAIT).toBeGreaterThanOrEqual(2)
  expect(await card.getByTestId('tool-live-output').count()).toBe(0) // nothing was printed: the clock moved alone
  expect(await card.getAttribute('class')).toContain('status-running')
  await page.locator('.msg-assistant', { hasText: 'Slept.' }).waitFor(WAIT)
  expect(await card.getByTestId('tool-elapsed').count()).toBe(0)
}, 60_000)

test('a command cancelled after it printed shows what it printed once, in its result with the note on the cut', async () => {
  llm.enqueue({ toolCalls: [bash('cut', 'echo first-line; echo second-line; sleep 30')] })
  await start('print then wait')
  const card = page.locator('[data-call-id="cut"]')
  await expect.poll(async () => (await card.textContent())?.includes('second-line'), WAIT).toBe(true)
  await page.getByRole('button', { name: 'Stop' }).click()
  await page.locator('[data-testid="turn-end"][data-reason="aborted"]').waitFor(WAIT)
  await card.getByTestId('status-interrupted').waitFor(WAIT)
  const text = (await card.locator('.tool-body').textContent()) ?? ''
  expect(text.split('second-line').length - 1).toBe(1)
  expect(text).toContain('the call was cancelled and the command was killed')
  expect(await card.getByTestId('tool-live-output').count()).toBe(0)
  await screenshot(page, 'cancelled-output-once')
}, 60_000)

test('Ctrl+K opens a palette: part of a title and ↑/↓ + Enter switch session, a word of a message finds one, "new" starts one, Esc closes', async () => {
  const made: Record<string, string> = {}
  for (const [name, reply] of [
    ['fix the walrus report', 'The walrus report is fixed.'],
    ['fix the heron report', 'Found a pelican in the heron report.'],
  ] as const) {
    llm.enqueue({ text: reply })
    await start(name)
    await page.locator('.msg-assistant', { hasText: reply }).waitFor(WAIT)
    made[name] = new URL(page.url()).pathname
  }
  const palette = page.getByTestId('palette')
  const entries = palette.getByTestId('palette-entry')
  const input = page.getByLabel('Search sessions and actions')

  await page.getByLabel('Message').focus() // from the message box too
  await page.keyboard.press('Control+k')
  await input.waitFor(WAIT)
  await page.keyboard.type('fix the')
  await expect
    .poll(() => entries.allTextContents(), WAIT)
    .toEqual([
      expect.stringContaining('fix the heron report'), // the newest first
      expect.stringContaining('fix the walrus report'),
    ])
  await screenshot(page, 'palette')
  expect(await entries.first().getAttribute('aria-selected')).toBe('true')
  await page.keyboard.press('ArrowDown')
  expect(await entries.nth(1).getAttribute('aria-selected')).toBe('true')
  await page.keyboard.press('Enter')
  await expect.poll(() => new URL(page.url()).pathname, WAIT).toBe(made['fix the walrus report'])
  expect(await palette.count()).toBe(0)

  await page.keyboard.press('Control+k')
  await input.fill('pelican')
  await entries.filter({ hasText: 'fix the heron report' }).waitFor(WAIT)
  await page.keyboard.press('Enter')
  await expect.poll(() => new URL(page.url()).pathname, WAIT).toBe(made['fix the heron report'])

  await page.keyboard.press('Control+k')
  await input.fill('new')
  expect(await entries.allTextContents()).toEqual(['New session'])
  await page.keyboard.press('Enter')
  await page.getByRole('heading', { name: 'What should dsh work on?' }).waitFor(WAIT)

  // At a desktop and a phone size: the palette fits the page and its entries are whole rows.
  for (const [width, height] of [
    [1440, 900],
    [390, 844],
  ] as const) {
    await page.setViewportSize({ width, height })
    await page.keyboard.press('Control+k')
    await input.waitFor(WAIT)
    await page.keyboard.type('report')
    await expect.poll(() => entries.count(), WAIT).toBe(2)
    await screenshot(page, `palette-${width}`)
    const box = (await palette.boundingBox())!
    expect(box.x >= 0 && box.x + box.width <= width).toBe(true)
    expect((await entries.first().boundingBox())!.height).toBeLessThan(60)
    await page.keyboard.press('Escape')
    await palette.waitFor({ state: 'detached', ...WAIT })
  }
  await page.setViewportSize({ width: 1280, height: 860 })
}, 60_000)
