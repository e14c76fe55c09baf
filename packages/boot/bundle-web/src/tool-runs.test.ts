import { afterAll, beforeAll, expect, test } from 'vitest'
import type { Page } from 'playwright-core'
import type { MockServer } from '@dsh/llm-mock-server'
import { api, openWebApp, screenshot, type WebApp, type WebProcess } from './test-support/web.ts'

// Runs of consecutive calls as the web shows them: the real `dsh --profile web` (mock model), Debian's Chromium.
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

test('six consecutive commands are one folded row "Ran 6 commands" that opens to six cards; expand all and collapse all', async () => {
  llm.enqueue({ toolCalls: [1, 2, 3, 4, 5, 6].map((n) => bash(`c${n}`, `echo step ${n}`)) }, { text: 'Six steps ran.' })
  await start('run six steps')
  await page.locator('.msg-assistant', { hasText: 'Six steps ran.' }).waitFor(WAIT)
  const group = page.getByTestId('run-group')
  expect(await group.count()).toBe(1)
  expect(await group.getByTestId('run-summary').textContent()).toBe('Ran 6 commands')
  const head = group.locator('.run-head')
  expect(await head.getAttribute('aria-expanded')).toBe('false')
  expect(await page.getByTestId('tool-bash').count()).toBe(0)
  await screenshot(page, 'run-folded')

  await head.click()
  await expect.poll(() => page.getByTestId('tool-bash').count(), WAIT).toBe(6)
  expect(await page.locator('[data-call-id="c6"] .tool-output').textContent()).toContain('step 6')
  await head.click()
  await expect.poll(() => page.getByTestId('tool-bash').count(), WAIT).toBe(0)

  const all = page.getByTestId('expand-all')
  expect((await all.textContent())?.trim()).toBe('Expand all')
  await all.click()
  await expect.poll(() => page.getByTestId('tool-bash').count(), WAIT).toBe(6)
  expect(await head.getAttribute('aria-expanded')).toBe('true')
  expect(await page.locator('[data-testid="tool-bash"] .tool-body').count()).toBe(6)
  expect((await all.textContent())?.trim()).toBe('Collapse all')
  await all.click()
  await expect.poll(() => head.getAttribute('aria-expanded'), WAIT).toBe('false')
  expect(await page.getByTestId('tool-bash').count()).toBe(0)
  expect((await all.textContent())?.trim()).toBe('Expand all')

  // The folded row at a desktop and a phone size: one line that fits the page, the summary whole.
  for (const [width, height] of [
    [1440, 900],
    [390, 844],
  ] as const) {
    await page.setViewportSize({ width, height })
    // Below 820 px the sidebar is a drawer that slides away: the picture is taken once it is gone.
    if (width < 820)
      await expect
        .poll(async () => {
          const nav = await page.locator('nav.sidebar').boundingBox()
          return !nav || nav.x + nav.width <= 0
        }, WAIT)
        .toBe(true)
    await screenshot(page, `run-folded-${width}`)
    const box = (await head.boundingBox())!
    expect(box.x + box.width).toBeLessThanOrEqual(width)
    expect(box.height).toBeLessThan(60)
    expect(await group.getByTestId('run-summary').isVisible()).toBe(true)
  }
  await page.setViewportSize({ width: 1280, height: 860 })
}, 60_000)

test('opened at a search hit inside a folded run, the page opens that run and brings the call into view', async () => {
  llm.enqueue({ toolCalls: [1, 2, 3, 4].map((n) => bash(`h${n}`, `echo needle ${n}`)) }, { text: 'Four ran.' })
  await start('run four with a needle')
  await page.locator('.msg-assistant', { hasText: 'Four ran.' }).waitFor(WAIT)
  const sessionId = new URL(page.url()).pathname.split('/').at(-1)!
  const { events } = await api<{ events: { type: string; seq: number; data: any }[] }>(web, 'sessions.page', {
    sessionId,
  })
  const hit = events.find((event) => event.type === 'tool/call' && event.data.callId === 'h3')! // 'needle 3' matched its command
  expect(await page.locator('[data-call-id="h3"]').count()).toBe(0) // folded as the run's row
  await page.goto(`${web.origin}/s/${sessionId}?seq=${hit.seq}`)
  const card = page.locator('[data-call-id="h3"]')
  await card.waitFor(WAIT)
  await expect.poll(() => card.getAttribute('class'), WAIT).toContain('jump-target')
  expect(await page.getByTestId('run-group').locator('.run-head').getAttribute('aria-expanded')).toBe('true')
}, 60_000)

test('a call waiting for approval inside a folded run is shown without opening it, and folds in once answered', async () => {
  llm.enqueue(
    {
      toolCalls: [
        bash('a1', 'echo one'),
        bash('a2', 'echo two'),
        bash('a3', 'echo three'),
        bash('ask', 'echo outside > outside-run.txt', {
          sandbox: false,
          justification: 'It must run unconfined to show a waiting call in a run.',
        }),
        bash('a5', 'echo five'),
        bash('a6', 'echo six'),
      ],
    },
    { text: 'All six ran.' },
  )
  await start('run six with one outside the sandbox')
  const waiting = page.locator('[data-call-id="ask"]')
  await waiting.waitFor(WAIT)
  const group = page.getByTestId('run-group')
  expect(await group.locator('.run-head').getAttribute('aria-expanded')).toBe('false')
  // Drawn below the folded row, the only card shown: the one that needs the reader.
  expect(await group.locator('.run-body [data-call-id="ask"]').count()).toBe(1)
  expect(await page.locator('[data-call-id="a1"]').count()).toBe(0)
  expect(await waiting.getAttribute('class')).toContain('waiting')
  expect(await group.locator('.run-head').textContent()).toContain('1 waiting for you')
  expect(await group.getByTestId('run-summary').textContent()).toBe('Running 6 commands')
  await screenshot(page, 'run-waiting')

  await page.getByTestId('approval-banner').getByRole('button', { name: 'Allow once' }).click()
  await page.locator('.msg-assistant', { hasText: 'All six ran.' }).waitFor(WAIT)
  expect(await group.getByTestId('run-summary').textContent()).toBe('Ran 6 commands')
  await expect.poll(() => waiting.count(), WAIT).toBe(0)
}, 60_000)
