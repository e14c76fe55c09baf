import { execFile } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, expect, test } from 'vitest'
import type { Page } from 'playwright-core'
import type { MockServer } from '@dsh/llm-mock-server'
import { cliBin, openWebApp, screenshot, type WebApp, type WebProcess } from './test-support/web.ts'

// Usage in the real `dsh --profile web` process, driven in Chromium: the session header shows the session's
// tokens and cost, and the usage page shows the same numbers as `dsh usage --json` on the same home.
const WAIT = { timeout: 40_000 }
const PRICE = { input: 2, cachedInput: 0.5, output: 8 }
let app: WebApp
let llm: MockServer
let web: WebProcess
let page: Page

beforeAll(async () => {
  app = await openWebApp({
    prepare: (folders) =>
      writeFileSync(
        join(folders.dshHome, 'settings.yaml'),
        `usage.prices:\n  deepseek/deepseek-v4-flash: ${JSON.stringify(PRICE)}\n`,
      ),
  })
  ;({ llm, web, page } = app)
}, 60_000)

afterAll(() => app?.close())

test('the session header shows its usage and cost; the usage page matches dsh usage --json', async () => {
  await page.getByRole('heading', { name: 'What should dsh work on?' }).waitFor(WAIT)
  llm.enqueue({ text: 'Counted.', usage: { input: 12_000, cacheRead: 3_000, output: 450 } })
  await page.getByLabel('Message').fill('count my tokens')
  await page.getByLabel('Message').press('Enter')
  const badge = page.getByTestId('session-usage')
  await badge.filter({ hasText: '1 req' }).waitFor(WAIT)
  const cost = (12_000 * PRICE.input + 3_000 * PRICE.cachedInput + 450 * PRICE.output) / 1_000_000
  // The prompt cache's share (3,000 of 15,000 input tokens) and what it saved, the session's and the last turn's.
  const saved = ((3_000 * (PRICE.input - PRICE.cachedInput)) / 1_000_000).toFixed(4)
  expect(await badge.textContent()).toContain(
    `15k in (3.0k cached) · 450 out · 1 req · $${cost.toFixed(4)} · 20% cached, saved $${saved} (last turn 20% cached, saved $${saved}, $${cost.toFixed(4)})`,
  )
  expect(await badge.getAttribute('title')).toContain(
    '12000 uncached input, 3000 cached input, 0 cache-write, 450 output tokens',
  )
  await screenshot(page, 'usage-header')

  await page.getByRole('link', { name: 'Usage' }).click()
  const table = page.getByTestId('usage-table')
  await table.locator('tr[data-key="deepseek/deepseek-v4-flash"]').waitFor(WAIT)
  const rows = await table.locator('tbody tr').evaluateAll((trs) =>
    trs.map((tr) => ({
      key: tr.getAttribute('data-key'),
      cells: [...tr.querySelectorAll('td')].slice(1, 6).map((td) => Number(td.textContent)),
      cost: tr.querySelector('td[data-cost]')?.getAttribute('data-cost'),
    })),
  )
  const { stdout } = await promisify(execFile)(process.execPath, [cliBin, 'usage', '--json', '--all-workspaces'], {
    cwd: web.workspace,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: web.home, DSH_HOME: web.dshHome },
  })
  const cli = JSON.parse(stdout)
  const expected = [...cli.groups, { key: 'Total', ...cli.total }].map((group: any) => ({
    key: group.key,
    cells: [group.requests, group.input, group.cacheRead, group.cacheWrite, group.output],
    cost: String(group.cost),
  }))
  expect(rows).toEqual(expected)
  expect(Number(rows[0]!.cost)).toBeCloseTo(cost, 12)
  await screenshot(page, 'usage-page')
}, 90_000)
