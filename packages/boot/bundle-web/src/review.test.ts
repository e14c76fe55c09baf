import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Browser, Page } from 'playwright-core'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import { bootComposition } from '@dsh/test-harness'
import {
  adoptBrowserSignIn,
  api,
  launchBrowser,
  removeHome,
  screenshot,
  startWeb,
  tempHome,
  type WebProcess,
} from './test-support/web.ts'

// Truthful cards, the Changes panel and rewind, as a user meets them: the real `dsh --profile web` process
// (DeepSeek adapter pointed at the mock model server) in Debian's Chromium, checked on disk.
const WAIT = { timeout: 40_000 }

let llm: MockServer
let web: WebProcess
let browser: Browser
let page: Page
let sessionId: string
let crashedId: string

/** A stored session whose process died while a command ran: a dispatched call, no result, no turn end. */
async function writeCrashed(dshHome: string, workspace: string): Promise<string> {
  const h = await bootComposition({
    profile: 'web',
    home: dshHome,
    workspace,
    argv: ['--port', '0'],
    patch: '- id: webserver\n  config: { announce: false, open: false }\n',
  })
  try {
    const session = await h.root.sessions.create({ cwd: workspace })
    session.append('turn/start', { turnId: 't1' })
    session.append('user/message', { content: [{ type: 'text', text: 'Run the long job' }], source: 'user' })
    session.append('tool/call', { callId: 'long', name: 'bash', arguments: { command: 'sleep 600' } })
    session.append('tool/dispatched', { callId: 'long' })
    await session.flush()
    await h.root.sessions.close(session.id)
    return session.id
  } finally {
    await h.dispose()
  }
}

const turnEnds = (p: Page) => p.locator('[data-testid="turn-end"]').count()
const card = (callId: string) => page.locator(`[data-call-id="${callId}"]`)
const onDisk = (path: string) => readFileSync(join(web.workspace, path), 'utf8')

async function turn(text: string) {
  const before = await turnEnds(page)
  await page.getByLabel('Message').fill(text)
  await page.getByLabel('Message').press('Enter')
  await expect.poll(() => turnEnds(page), WAIT).toBe(before + 1)
}

beforeAll(async () => {
  llm = await startMockServer({ chunkChars: 6 })
  const folders = tempHome()
  writeFileSync(join(folders.workspace, 'a.txt'), 'one\ntwo\n')
  writeFileSync(join(folders.workspace, 'b.txt'), 'bee\n')
  crashedId = await writeCrashed(folders.dshHome, folders.workspace)
  web = await startWeb({
    home: folders.home,
    workspace: folders.workspace,
    env: { DEEPSEEK_BASE_URL: llm.url, DEEPSEEK_API_KEY: 'test' },
  })
  browser = await launchBrowser()
  page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage()
  await page.goto(web.link)
  await adoptBrowserSignIn(web, page.context())
  sessionId = (await api(web, 'sessions.create', { cwd: web.workspace })).sessionId
  await page.goto(`${web.origin}/s/${sessionId}`)
  await page.getByLabel('Message').waitFor(WAIT)
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await web?.stop()
  await llm?.close()
  if (web) removeHome(web)
})

describe('review and truthful cards in Chromium', () => {
  test('a refused edit shows its proposal marked not applied, with no green diff; an exit-1 command shows a failure icon', async () => {
    llm.enqueue(
      {
        toolCalls: [
          { id: 'read-a', name: 'read', arguments: { path: 'a.txt' } },
          { id: 'edit-a', name: 'edit', arguments: { path: 'a.txt', old_string: 'one', new_string: 'uno' } },
          // Never read in this session: read-before-edit refuses it before any effect.
          { id: 'edit-b', name: 'edit', arguments: { path: 'b.txt', old_string: 'bee', new_string: 'wasp' } },
          { id: 'fails', name: 'bash', arguments: { command: 'echo oops; exit 1' } },
        ],
      },
      { text: 'Turn one done.' },
    )
    await turn('first turn')
    expect(onDisk('b.txt')).toBe('bee\n')
    const refused = card('edit-b')
    await refused.getByTestId('change-not-applied').waitFor(WAIT)
    expect(await refused.getByTestId('change-not-applied').textContent()).toContain('Refused — not applied')
    expect(await refused.locator('.diffstat').count()).toBe(0)
    const addedLine = refused.locator('.diff-add').first()
    expect(await addedLine.textContent()).toContain('wasp')
    // Drawn without the green of an applied change.
    expect(
      await addedLine.evaluate(
        (element) =>
          (
            globalThis as unknown as { getComputedStyle(element: unknown): { backgroundColor: string } }
          ).getComputedStyle(element).backgroundColor,
      ),
    ).toBe('rgba(0, 0, 0, 0)')
    // The four calls are one folded run: the refused edit and the failed command show without opening it,
    // the applied edit once it is opened.
    expect(await card('edit-a').count()).toBe(0)
    await page.getByTestId('run-group').first().locator('.run-head').click()
    const applied = card('edit-a').locator('.diff-add').first()
    expect(
      await applied.evaluate(
        (element) =>
          (
            globalThis as unknown as { getComputedStyle(element: unknown): { backgroundColor: string } }
          ).getComputedStyle(element).backgroundColor,
      ),
    ).not.toBe('rgba(0, 0, 0, 0)')
    expect(await card('edit-a').locator('.diffstat').count()).toBe(1)
    const failed = card('fails')
    await failed.getByTestId('status-failed').waitFor(WAIT)
    expect(await failed.locator('[aria-label="done"]').count()).toBe(0)
    expect(await failed.locator('.badge-error').textContent()).toBe('exit 1')
    await screenshot(page, 'review-01-truthful-cards')
  })

  test('the Changes panel lists the files the session changed, with numbered diffs', async () => {
    llm.enqueue(
      {
        toolCalls: [
          { id: 'edit-a2', name: 'edit', arguments: { path: 'a.txt', old_string: 'two', new_string: 'zwei' } },
          { id: 'write-c', name: 'write', arguments: { path: 'c.txt', content: 'fresh\n' } },
        ],
      },
      { text: 'Turn two done.' },
    )
    await turn('second turn')
    expect(onDisk('a.txt')).toBe('uno\nzwei\n')
    await page.getByTestId('changes-toggle').click()
    const files = page.getByTestId('changed-file')
    await expect.poll(() => files.count(), WAIT).toBe(2)
    expect(
      await files.evaluateAll((rows) =>
        rows.map((row) => [row.getAttribute('data-path'), row.getAttribute('data-status')]),
      ),
    ).toEqual([
      ['a.txt', 'modified'],
      ['c.txt', 'added'],
    ])
    const lines = page.locator('[data-path="a.txt"] .diff-line')
    const rendered = await lines.evaluateAll((rows) =>
      rows.map((row) => [...row.querySelectorAll('span')].map((span) => span.textContent).join('|')),
    )
    expect(rendered).toEqual(['1||-|one', '2||-|two', '|1|+|uno', '|2|+|zwei'])
    await page.getByLabel('Compare since').selectOption('2')
    await expect
      .poll(
        () => page.locator('[data-path="a.txt"] .diff-line').evaluateAll((rows) => rows.map((row) => row.textContent)),
        WAIT,
      )
      .toEqual(['11 uno', '2-two', '2+zwei'])
    await screenshot(page, 'review-02-changes-panel')
  })

  test('rewinding to before turn 2 restores the files byte for byte; a file changed outside dsh since is reported, not overwritten', async () => {
    writeFileSync(join(web.workspace, 'c.txt'), 'edited by the user\n')
    await page.getByLabel('Rewind to before turn').selectOption('2')
    await page.getByRole('button', { name: 'Rewind' }).click()
    await page.getByTestId('rewind-outcome').waitFor(WAIT)
    expect(readFileSync(join(web.workspace, 'a.txt'))).toEqual(Buffer.from('uno\ntwo\n'))
    expect(onDisk('c.txt')).toBe('edited by the user\n')
    expect(await page.getByTestId('rewind-conflict').getAttribute('data-path')).toBe('c.txt')
    expect(await page.getByTestId('rewind-conflict').textContent()).toContain('changed since the session last wrote it')
    const logged = (await api(web, 'sessions.page', { sessionId, limit: 2000 })).events.filter(
      (event: { type: string }) => event.type === 'rewind/done',
    )
    expect(logged.map((event: { data: unknown }) => event.data)).toEqual([
      expect.objectContaining({
        toTurn: 2,
        actor: 'user:web-tab',
        restored: [expect.objectContaining({ path: 'a.txt' })],
      }),
    ])
    await screenshot(page, 'review-03-rewound')
  })

  test('sending while scrolled up jumps to the new turn', async () => {
    await page.getByTestId('changes-toggle').click() // close the panel: the conversation gets the height
    await page.setViewportSize({ width: 1280, height: 520 })
    const conversation = page.getByTestId('conversation')
    await conversation.evaluate((element: { scrollTop: number }) => (element.scrollTop = 0))
    llm.enqueue({ text: 'Here at the bottom.' })
    await turn('where am I?')
    await page.locator('.msg-assistant', { hasText: 'Here at the bottom.' }).waitFor(WAIT)
    const gap = await conversation.evaluate(
      (element: { scrollHeight: number; scrollTop: number; clientHeight: number }) =>
        element.scrollHeight - element.scrollTop - element.clientHeight,
    )
    expect(gap).toBeLessThan(80)
    await page.setViewportSize({ width: 1280, height: 900 })
  })

  test('a call a crash left running shows "interrupted" as soon as the session is opened', async () => {
    await page.goto(`${web.origin}/s/${crashedId}`)
    await card('long').getByTestId('status-interrupted').waitFor(WAIT)
    expect(await card('long').locator('.spin').count()).toBe(0)
  })
})
