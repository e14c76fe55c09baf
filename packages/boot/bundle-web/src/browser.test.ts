import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Browser, Page } from 'playwright-core'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import { bootComposition } from '@dsh/test-harness'
import {
  adoptBrowserSignIn,
  api,
  cliBin,
  launchBrowser,
  removeHome,
  screenshot,
  startWeb,
  tempHome,
  webDist,
  type WebProcess,
} from './test-support/web.ts'

// The product as a user meets it: the real `dsh --profile web` process (DeepSeek adapter pointed at the mock
// model server), driven in Debian's Chromium. One process, one browser, tests in order on one session.
const WAIT = { timeout: 40_000 }
// The DeepSeek catalogue plus one model that reads images, so the attach flow can reach the model; retries
// of a failed model request after tens of milliseconds, not seconds. Only DeepSeek has a key.
const PATCH = `
- id: llm-deepseek
  config:
    models:
      - { id: deepseek-v4-flash, contextWindow: 1000000, efforts: [off, low, high, max] }
      - { id: deepseek-v4-pro, contextWindow: 1000000, efforts: [off, low, high, max] }
      - { id: deepseek-vision-test, contextWindow: 128000, images: true, reasoning: false }
- id: llm-retry
  config: { baseDelayMs: 40 }
`
const ARCHIVE_TURNS = 2500

let llm: MockServer
let web: WebProcess
let browser: Browser
let page: Page
let sessionId: string
let archiveId: string

/** A stored session of 10k events (4 per turn), written by the real session service before dsh starts. */
async function writeArchive(dshHome: string, workspace: string): Promise<string> {
  const h = await bootComposition({
    profile: 'web',
    home: dshHome,
    workspace,
    argv: ['--port', '0'],
    patch: '- id: webserver\n  config: { announce: false, open: false }\n',
  })
  try {
    const session = await h.root.sessions.create({ cwd: workspace })
    for (let i = 0; i < ARCHIVE_TURNS; i++) {
      const turnId = `turn-${i}`
      session.append('turn/start', { turnId })
      session.append('user/message', {
        content: [
          { type: 'text', text: i === 0 ? 'Archive: walk through the whole migration plan' : `Question number ${i}` },
        ],
        source: 'user',
      })
      const text =
        i === 1234 ? 'The zebracorn module moves last.' : `Answer number ${i}, with a little **markdown** and \`code\`.`
      session.append('assistant/message', {
        content: [{ type: 'text', text }],
        usage: { input: 100, output: 20, cacheRead: 0, cacheWrite: 0 },
        finish: 'stop',
      })
      session.append('turn/end', { turnId, reason: 'completed' })
    }
    await session.flush()
    await h.root.sessions.close(session.id)
    return session.id
  } finally {
    await h.dispose()
  }
}

const lastTurnEnd = (p: Page) => p.locator('[data-testid="turn-end"]').last()
const turnEnds = (p: Page) => p.locator('[data-testid="turn-end"]').count()

async function send(p: Page, text: string) {
  await p.getByLabel('Message').fill(text)
  await p.getByLabel('Message').press('Enter')
}

/** Sends a prompt in the open session and waits for its turn to end. */
async function turn(p: Page, text: string, reason = 'completed') {
  const before = await turnEnds(p)
  await send(p, text)
  await expect.poll(() => turnEnds(p), WAIT).toBe(before + 1)
  expect(await lastTurnEnd(p).getAttribute('data-reason')).toBe(reason)
}

const logOf = async (id: string) =>
  (await api(web, 'sessions.page', { sessionId: id, limit: 2000 })).events as { type: string; data: any }[]

beforeAll(async () => {
  if (!existsSync(webDist)) throw new Error(`the web app is not built (${webDist} is missing): run npm run setup`)
  llm = await startMockServer({ chunkChars: 6 })
  const folders = tempHome()
  archiveId = await writeArchive(folders.dshHome, join(folders.home, 'projects', 'archive'))
  mkdirSync(join(folders.workspace, 'src'), { recursive: true })
  web = await startWeb({
    home: folders.home,
    workspace: folders.workspace,
    patch: PATCH,
    env: { DEEPSEEK_BASE_URL: llm.url, DEEPSEEK_API_KEY: 'test' },
  })
  browser = await launchBrowser()
  // One browser context (one cookie jar), so a second tab is a second tab of the same browser.
  page = await (await browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage()
  await page.goto(web.link)
  await adoptBrowserSignIn(web, page.context())
}, 60_000)

afterAll(async () => {
  await browser?.close()
  const code = await web?.stop()
  await llm?.close()
  if (web) removeHome(web)
  expect(code).toBe(143)
})

describe('the web app in Chromium', () => {
  test('the printed link signs the browser in and lands on the bare origin; the page holds no secret', async () => {
    expect(web.stdout()).toContain(`dsh web is running at http://dsh:`)
    await page.getByRole('heading', { name: 'What should dsh work on?' }).waitFor(WAIT)
    expect(page.url()).toBe(`${web.origin}/`)
    const code = new URL(web.link).password
    const secret = web.cookie!.split('=')[1]!
    const visible = (await page.evaluate(
      'JSON.stringify({ href: location.href, cookie: document.cookie, local: { ...localStorage }, session: { ...sessionStorage } })',
    )) as string
    expect(visible).not.toContain(code)
    expect(visible).not.toContain(secret)
    expect(web.stderr()).not.toContain(code)
    expect(web.stderr()).not.toContain(secret)
  })

  test('models of a provider without a key are marked "(no key)" and link to the keys', async () => {
    const picker = page.getByLabel('Model', { exact: true })
    await picker.locator('option', { hasText: 'claude-sonnet-4-6 (no key)' }).waitFor({ state: 'attached', ...WAIT })
    expect(await picker.locator('option', { hasText: 'deepseek-v4-flash' }).textContent()).toBe('deepseek-v4-flash')
    expect(await page.getByTestId('model-no-key').count()).toBe(0)
    await picker.selectOption('anthropic/claude-sonnet-4-6')
    const link = page.getByTestId('model-no-key')
    expect(await link.getAttribute('aria-label')).toBe('Add a key for anthropic')
    expect(await link.getAttribute('title')).toContain('ANTHROPIC_API_KEY')
    await screenshot(page, '01a-model-without-key')
    await link.click()
    await page.waitForURL(`${web.origin}/settings/models`, WAIT)
    expect(await page.getByTestId('credential-ANTHROPIC_API_KEY').textContent()).toContain('not set')
    await page.goBack()
    await page.getByRole('heading', { name: 'What should dsh work on?' }).waitFor(WAIT)
    expect(await picker.inputValue()).toBe('deepseek/deepseek-v4-flash')
  })

  test('a session started in a folder picked on disk streams reasoning and text, and shows bash with its output', async () => {
    await page.getByTestId('workspace').click()
    await page.getByRole('button', { name: 'Home folder' }).click()
    // The home as a workspace is said before it is picked (docs/security.md, "The user's home").
    await expect
      .poll(() => page.locator('.picker-home-warning').textContent(), WAIT)
      .toContain('This is your home folder')
    await page.getByLabel('Folder path').fill(web.workspace)
    await page.getByRole('button', { name: 'Go' }).click()
    await expect.poll(() => page.locator('.picker-current').textContent(), WAIT).toBe(web.workspace)
    expect(await page.locator('.picker-home-warning').count()).toBe(0)
    await screenshot(page, '01-new-session-folder-picker')
    await page.getByRole('button', { name: 'Use this folder' }).click()
    expect(await page.getByTestId('workspace').textContent()).toContain(web.workspace)

    llm.enqueue(
      {
        reasoning: 'The user wants notes. I will write them with a shell command and show the result.',
        toolCalls: [
          {
            name: 'bash',
            arguments: {
              command: "printf 'alpha\\nbeta\\n' | tee notes.txt",
              description: 'Write two lines to notes.txt',
            },
          },
        ],
      },
      {
        text: 'I wrote **notes.txt** with two lines:\n\n```sh\ncat notes.txt\n```\n\nIt holds `alpha` and `beta`. Anything else you would like me to change in this workspace?',
        chunkDelayMs: 25,
      },
    )
    await send(page, 'Create notes.txt with two lines')
    await page.waitForURL(/\/s\/[\w-]+$/, WAIT)
    sessionId = page.url().split('/s/')[1]!
    await page.getByTestId('reasoning').first().waitFor(WAIT)
    const bash = page.getByTestId('tool-bash').first()
    await bash.locator('.terminal', { hasText: 'alpha' }).waitFor(WAIT)
    await page.locator('.msg-assistant.streaming .markdown').first().waitFor(WAIT)
    await screenshot(page, '02-streaming')
    await lastTurnEnd(page).waitFor(WAIT)
    expect(await lastTurnEnd(page).getAttribute('data-reason')).toBe('completed')
    expect(await bash.locator('.terminal').textContent()).toContain('alpha\nbeta')
    expect(await page.locator('.msg-assistant .markdown').last().textContent()).toContain('It holds alpha and beta.')
    expect(await page.locator('.reasoning-head').first().textContent()).toContain('Thought')
    expect(readFileSync(join(web.workspace, 'notes.txt'), 'utf8')).toBe('alpha\nbeta\n')
    await screenshot(page, '03-bash-and-answer')
  })

  test('an edit shows as a diff of the lines it changed', async () => {
    llm.enqueue(
      { toolCalls: [{ name: 'read', arguments: { path: 'notes.txt' } }] },
      {
        toolCalls: [{ name: 'edit', arguments: { path: 'notes.txt', old_string: 'beta', new_string: 'gamma\ndelta' } }],
      },
      { text: 'Replaced `beta` with two lines.' },
    )
    await turn(page, 'Replace beta with gamma and delta')
    const edit = page.getByTestId('tool-edit').last()
    expect(await edit.locator('.diff-del').allTextContents()).toEqual([expect.stringContaining('beta')])
    expect(await edit.locator('.diff-add').allTextContents()).toEqual([
      expect.stringContaining('gamma'),
      expect.stringContaining('delta'),
    ])
    expect(await edit.locator('.diffstat').textContent()).toBe('+2 −1')
    expect(await page.getByTestId('tool-read').last().locator('.tool-title').textContent()).toBe('Read notes.txt')
    expect(readFileSync(join(web.workspace, 'notes.txt'), 'utf8')).toBe('alpha\ngamma\ndelta\n')
    await screenshot(page, '04-edit-diff')
  })

  test('an approval asked in one tab is answered from a second tab, and both see the decision', async () => {
    const second = await page.context().newPage()
    await second.setViewportSize({ width: 1100, height: 760 })
    try {
      // A second tab of the same browser needs no new link: the sign-in cookie goes with it.
      await second.goto(`${web.origin}/`)
      await second.locator(`a[data-session-id="${sessionId}"]`).click()
      await second.getByTestId('turn-end').first().waitFor(WAIT)

      llm.enqueue(
        {
          toolCalls: [
            {
              name: 'bash',
              arguments: {
                command: 'echo approved > outside-check.txt',
                sandbox: false,
                justification: 'It must run unconfined to show the approval flow.',
              },
            },
          ],
        },
        { text: 'Done with approval.' },
      )
      await send(page, 'Run it outside the sandbox')
      await page.getByTestId('approval-banner').waitFor(WAIT)
      const banner = second.getByTestId('approval-banner')
      await banner.waitFor(WAIT)
      expect(await banner.textContent()).toContain('echo approved > outside-check.txt')
      expect(await banner.textContent()).toContain('It must run unconfined')
      // The request offers the exact command as its rule (a redirection cannot be split), so all three allow buttons show.
      for (const name of ['Allow once', 'Allow for this session', 'Always allow in this workspace', 'Reject'])
        expect(await banner.getByRole('button', { name }).isVisible()).toBe(true)
      const rule = banner.getByTestId('approval-rule')
      expect(await rule.inputValue()).toBe('unconfined(echo approved > outside-check.txt)')
      // The rule is editable before it is kept; one that does not cover this call is refused on the card and the request keeps waiting.
      await rule.fill('unconfined(echo other *)')
      await banner.getByRole('button', { name: 'Allow for this session' }).click()
      expect(await banner.getByTestId('approval-error').textContent()).toContain('does not cover this call')
      await screenshot(second, '05-approval-second-tab')
      // Esc in the field puts the suggestion back; then the card's keys answer (1: allow once).
      await rule.press('Escape')
      expect(await rule.inputValue()).toBe('unconfined(echo approved > outside-check.txt)')
      await second.keyboard.press('1')

      await expect.poll(() => turnEnds(page), WAIT).toBe(3)
      await page.getByTestId('approval-banner').waitFor({ state: 'detached', ...WAIT })
      expect(await page.getByTestId('approval-decided').last().textContent()).toContain('Allowed once by you')
      expect(readFileSync(join(web.workspace, 'outside-check.txt'), 'utf8')).toBe('approved\n')
      const decided = (await logOf(sessionId)).filter((event) => event.type === 'approval/decided')
      expect(decided.map((event) => event.data)).toEqual([
        expect.objectContaining({ answer: 'allow_once', by: 'user' }),
      ])
      expect((await logOf(sessionId)).filter((event) => event.type === 'grant/added')).toEqual([])
      await screenshot(page, '06-approval-decided-first-tab')
    } finally {
      await second.close()
    }
  })

  test('Stop cancels a streaming turn and the conversation says so', async () => {
    llm.enqueue({
      text: 'Let me think about this at great length before I answer anything at all',
      stallAfterChunks: 6,
    })
    await send(page, 'Write a very long essay')
    await page.locator('.msg-assistant.streaming').waitFor(WAIT)
    await page.getByRole('button', { name: 'Stop' }).click()
    await expect.poll(() => turnEnds(page), WAIT).toBe(4)
    expect(await lastTurnEnd(page).getAttribute('data-reason')).toBe('aborted')
    expect(await lastTurnEnd(page).textContent()).toContain('Cancelled')
    await screenshot(page, '07-cancelled')
  })

  test('switching the model and the permission preset is logged and shown', async () => {
    await page.getByLabel('Model', { exact: true }).selectOption('deepseek/deepseek-v4-pro')
    await page.getByTestId('notice').filter({ hasText: 'deepseek/deepseek-v4-pro' }).waitFor(WAIT)
    await page.getByLabel('Permission preset').selectOption('read-only')
    await page.getByTestId('notice').filter({ hasText: 'Permissions: read-only' }).waitFor(WAIT)
    const log = await logOf(sessionId)
    expect(log.filter((event) => event.type === 'model/route').at(-1)!.data.route).toEqual({
      provider: 'deepseek',
      model: 'deepseek-v4-pro',
    })
    expect(log.filter((event) => event.type === 'permission/preset').at(-1)!.data).toMatchObject({
      preset: 'read-only',
      mode: 'read-only',
    })

    llm.enqueue({ text: 'Answered by the pro model.' })
    await turn(page, 'Which model are you?')
    expect(llm.requests.at(-1)!.body.model).toBe('deepseek-v4-pro')
    await screenshot(page, '08-model-and-preset')
  })

  test('a reload shows the same conversation', async () => {
    const read = () =>
      page.locator('.conversation-inner').evaluate((element) => ({
        users: [...element.querySelectorAll('[data-testid="user-message"]')].map((node) => node.textContent),
        tools: [...element.querySelectorAll('[data-testid^="tool-"]')].map((node) => node.getAttribute('data-testid')),
        endings: [...element.querySelectorAll('[data-testid="turn-end"]')].map((node) =>
          node.getAttribute('data-reason'),
        ),
      }))
    const before = await read()
    await page.reload()
    await expect.poll(() => turnEnds(page), WAIT).toBe(before.endings.length)
    expect(await read()).toEqual(before)
    expect(before.users).toHaveLength(5)
    expect(before.endings).toEqual(['completed', 'completed', 'completed', 'aborted', 'completed'])
    await screenshot(page, '09-after-reload')
  })

  test('a stored 10k-event session opens at its end, fast, and pages back on demand', async () => {
    const started = Date.now()
    await page.locator(`a[data-session-id="${archiveId}"]`).click()
    await page.locator('.msg-assistant', { hasText: `Answer number ${ARCHIVE_TURNS - 1}` }).waitFor(WAIT)
    const openMs = Date.now() - started
    console.log(`stored ${ARCHIVE_TURNS * 4}-event session: last message visible ${openMs} ms after the click`)
    const rendered = await page.getByTestId('user-message').count()
    expect(rendered).toBeLessThan(200)
    expect(await page.getByTestId('session-status').textContent()).toBe('stored')
    await screenshot(page, '10-stored-10k-session')
    await page.getByTestId('conversation').evaluate((element) => (element.scrollTop = 0))
    await expect.poll(() => page.getByTestId('user-message').count(), WAIT).toBeGreaterThan(rendered)
  })

  test('a message to a stored session resumes it and continues the conversation', async () => {
    llm.enqueue({ text: 'Resumed: the plan continues with step 2501.' })
    await send(page, 'Continue the plan')
    await page.locator('.msg-assistant', { hasText: 'Resumed: the plan continues' }).waitFor(WAIT)
    await expect.poll(() => page.getByTestId('session-status').textContent(), WAIT).toBe('idle')
    const sent = llm.requests.at(-1)!.body.messages
    // Every stored question and the new one; the runtime context dsh logs at the resumed session's first step is one more.
    const users = sent
      .filter((message: { role: string }) => message.role === 'user')
      .map((message: { content: unknown }) => JSON.stringify(message.content))
    expect(users.filter((text: string) => !text.includes('Runtime context (gathered by dsh'))).toHaveLength(
      ARCHIVE_TURNS + 1,
    )
    expect(users.filter((text: string) => text.includes('Runtime context (gathered by dsh'))).toHaveLength(1)
    await screenshot(page, '10b-stored-session-resumed')
  })

  test('sessions are found by title and by the text of their messages', async () => {
    const search = page.getByLabel('Search sessions')
    await search.fill('zebracorn')
    await expect.poll(() => page.locator('.session-link').count(), WAIT).toBe(1)
    expect(await page.locator('.session-link .session-snippet').textContent()).toContain('zebracorn module moves last')
    expect(await page.locator('.session-link').getAttribute('data-session-id')).toBe(archiveId)
    // The sidebar shows the full-text index's hit: the word marked, at the event `dsh sessions search` names.
    expect(await page.locator('.session-link .session-snippet mark').allTextContents()).toEqual(['zebracorn'])
    const cli = spawnSync(process.execPath, [cliBin, 'sessions', 'search', 'zebracorn', '--all-workspaces', '--json'], {
      cwd: web.workspace,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: web.home, DSH_HOME: web.dshHome },
      encoding: 'utf8',
    })
    expect(cli.status).toBe(0)
    const cliHits = cli.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(cliHits.map((hit) => hit.sessionId)).toEqual([archiveId])
    expect(await page.locator('.session-link .session-snippet').getAttribute('data-seq')).toBe(String(cliHits[0].seq))
    await screenshot(page, '11-search-text')
    // The hit opens the session at its event: older pages are loaded until it is there, and it is in view.
    await page.locator('.session-link').click()
    await page.waitForURL((url) => url.search === `?seq=${cliHits[0].seq}`, WAIT)
    await expect.poll(() => page.locator('.jump-target').textContent(), WAIT).toContain('zebracorn module moves last')
    const inView = await page.locator('.jump-target').evaluate((element) => {
      const box = element.getBoundingClientRect()
      return box.top >= 0 && box.bottom <= element.ownerDocument.documentElement.clientHeight
    })
    expect(inView).toBe(true)
    await screenshot(page, '11b-search-hit-opened')
    await search.fill('notes.txt with two')
    await expect.poll(() => page.locator('.session-link').getAttribute('data-session-id'), WAIT).toBe(sessionId)
    expect(await page.locator('.session-link').count()).toBe(1)
    await search.fill('')
    await expect.poll(() => page.locator('.session-link').count(), WAIT).toBe(2)
  }, 90_000) // a CLI run and paging a 10k-event session back to the hit, on a shared 2-core machine

  test('fork from a completed turn opens a new session holding the conversation up to it', async () => {
    await page.locator(`a[data-session-id="${sessionId}"]`).click()
    await expect.poll(() => turnEnds(page), WAIT).toBe(5)
    await page.getByTestId('turn-end').first().hover()
    await page.getByTestId('turn-end').first().getByRole('button', { name: 'Fork from here' }).click()
    await page.waitForURL((url) => /\/s\//.test(url.pathname) && !url.pathname.endsWith(sessionId), WAIT)
    const forkId = page.url().split('/s/')[1]!
    await expect.poll(() => turnEnds(page), WAIT).toBe(1)
    expect(await page.getByTestId('user-message').allTextContents()).toEqual(['Create notes.txt with two lines'])
    const view = await api(web, 'sessions.open', { sessionId: forkId })
    expect(view.parent).toMatchObject({ id: sessionId })
    await screenshot(page, '12-forked')
  })

  test('an attached image is stored beside the log, sent to a model that reads images and shown as a thumbnail', async () => {
    expect(await page.getByRole('button', { name: 'Attach images' }).isDisabled()).toBe(true)
    await page.getByLabel('Model', { exact: true }).selectOption('deepseek/deepseek-vision-test')
    await expect.poll(() => page.getByRole('button', { name: 'Attach images' }).isDisabled(), WAIT).toBe(false)
    const png = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAYAAABytg0kAAAAFklEQVR4nGNk+M/wn4GBgYGJgYGBAQAjRgMBnDYoPQAAAABJRU5ErkJggg==',
      'base64',
    )
    const file = join(web.home, 'dot.png')
    writeFileSync(file, png)
    await page.locator('input[type="file"]').setInputFiles(file)
    await page.getByTestId('pending-images').waitFor(WAIT)
    llm.enqueue({ text: 'A tiny image.' })
    await turn(page, 'What is in this image?')
    await page.locator('[data-testid="user-message"] .thumb img').last().waitFor(WAIT)
    const user = (await logOf(page.url().split('/s/')[1]!)).filter((event) => event.type === 'user/message').at(-1)!
    const image = user.data.content.find((block: { type: string }) => block.type === 'image')
    expect(image).toMatchObject({
      type: 'image',
      mediaType: 'image/png',
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
    })
    expect(image.data).toBeUndefined()
    const sent = llm.requests
      .at(-1)!
      .body.messages.find(
        (message: { role: string; content: unknown }) => message.role === 'user' && Array.isArray(message.content),
      )
    expect(JSON.stringify(sent)).toContain(png.toString('base64'))
    await screenshot(page, '13-image-attached')
  })

  test('a model request that fails is retried, and the conversation says so as a muted notice', async () => {
    const forkId = page.url().split('/s/')[1]!
    llm.enqueue({ error: { status: 500, message: 'upstream overloaded' } }, { text: 'Answered after a retry.' })
    await turn(page, 'Are you still there?')
    const notice = page.getByTestId('notice').filter({ hasText: 'Model request failed' })
    expect(await notice.count()).toBe(1)
    expect(await notice.textContent()).toMatch(
      /^\s*Model request failed \(SERVER\); retrying in \d+ ms — retry 1 of 4$/,
    )
    expect(await notice.getAttribute('class')).toContain('notice-muted')
    expect(await page.locator('.msg-assistant').last().textContent()).toContain('Answered after a retry.')
    expect(await page.locator('.conversation-inner .callout-error').count()).toBe(0)
    const retries = (await logOf(forkId)).filter((event) => event.type === 'llm/retry')
    expect(retries.map((event) => event.data)).toEqual([expect.objectContaining({ attempt: 1, code: 'SERVER' })])
    await screenshot(page, '13b-retry-notice')
  })

  test('the settings page shows keys write-only and the composition with its layers', async () => {
    await page.getByRole('link', { name: 'Settings' }).click()
    const key = page.getByTestId('credential-DEEPSEEK_API_KEY')
    await key.waitFor(WAIT)
    expect(await key.textContent()).toContain('set · from the environment')
    expect(await page.content()).not.toContain('value="test"')
    await screenshot(page, '14-settings')
    await page.getByRole('tab', { name: 'Composition' }).click()
    await page.getByTestId('composition').waitFor(WAIT)
    const row = page.locator('[data-row-id="webserver"]')
    expect(await row.textContent()).toContain('@dsh/bundle-web')
    await screenshot(page, '15-composition')
  })

  test('a session is renamed from its sidebar row and deleted after the row asks', async () => {
    const row = page.locator('li.session-item', { has: page.locator(`a[data-session-id="${archiveId}"]`) })
    await row.hover()
    await row.getByRole('button', { name: 'Rename session' }).click()
    await row.getByLabel('New title').fill('Migration archive')
    await row.getByLabel('New title').press('Enter')
    await expect.poll(() => row.locator('.session-title').textContent(), WAIT).toBe('Migration archive')
    expect(
      (await api(web, 'sessions.list', {})).sessions.find((item: { id: string }) => item.id === archiveId),
    ).toMatchObject({ title: 'Migration archive' })

    await row.hover()
    await row.getByRole('button', { name: 'Delete session' }).click()
    const confirm = row.getByRole('alertdialog')
    expect(await confirm.textContent()).toContain('Delete for good?')
    await confirm.getByRole('button', { name: 'Keep' }).click()
    expect(await row.count()).toBe(1)
    await row.hover()
    await row.getByRole('button', { name: 'Delete session' }).click()
    await row.getByRole('alertdialog').getByRole('button', { name: 'Delete' }).click()
    await expect.poll(() => page.locator(`a[data-session-id="${archiveId}"]`).count(), WAIT).toBe(0)
    expect((await api(web, 'sessions.list', {})).sessions.map((item: { id: string }) => item.id)).not.toContain(
      archiveId,
    )
    await screenshot(page, '16-session-deleted')
  })

  test('on the approval card, 2 keeps the suggested rule, 3 keeps the rule the person edited, Esc rejects', async () => {
    // A session of its own (the tests before count the first session's turns), in the default preset.
    const { sessionId: own } = await api(web, 'sessions.create', { cwd: web.workspace })
    await page.goto(`${web.origin}/s/${own}`)
    await page.getByLabel('Message').waitFor(WAIT)
    const unconfined = (command: string) => ({
      toolCalls: [{ name: 'bash', arguments: { command, sandbox: false, justification: 'The approval keys.' } }],
    })
    const asked = async () => (await logOf(own)).filter((event) => event.type === 'approval/asked').length
    const grants = async () =>
      (await logOf(own)).filter((event) => event.type === 'grant/added').map((event) => event.data)
    // The composer keeps the focus after a send: the card's keys act only once nothing is being typed in.
    type Focused = { document: { activeElement: { blur?: () => void } | null } }
    const blur = () => page.evaluate(() => (globalThis as unknown as Focused).document.activeElement?.blur?.())
    const banner = page.getByTestId('approval-banner')

    // 2: allow for this session, keeping the suggestion: the program and what follows it, not the exact line.
    llm.enqueue(unconfined('touch key-one.txt'), { text: 'Touched.' })
    let before = await turnEnds(page)
    await send(page, 'Touch one file outside the sandbox')
    await banner.waitFor(WAIT)
    expect(await banner.getByTestId('approval-rule').inputValue()).toBe('unconfined(touch *)')
    await blur()
    await page.keyboard.press('2')
    await expect.poll(() => turnEnds(page), WAIT).toBe(before + 1)
    expect(await grants()).toEqual([expect.objectContaining({ rule: 'unconfined(touch *)', scope: 'session' })])
    // The next touch with another file name is covered by that rule: nobody is asked.
    const askedSoFar = await asked()
    llm.enqueue(unconfined('touch key-two.txt'), { text: 'Touched again.' })
    await turn(page, 'Touch another')
    expect(existsSync(join(web.workspace, 'key-two.txt'))).toBe(true)
    expect(await asked()).toBe(askedSoFar)

    // 3: always allow, with the rule the person typed (wider than the exact line offered for an option first).
    llm.enqueue(unconfined('mkdir -p key-dir/a'), { text: 'Made.' })
    before = await turnEnds(page)
    await send(page, 'Make a folder outside the sandbox')
    await banner.waitFor(WAIT)
    const rule = banner.getByTestId('approval-rule')
    expect(await rule.inputValue()).toBe('unconfined(mkdir -p key-dir/a)')
    await rule.fill('unconfined(mkdir -p key-dir/*)')
    await page.keyboard.press('3') // typed into the field: not an answer
    expect(await rule.inputValue()).toBe('unconfined(mkdir -p key-dir/*)3')
    await rule.fill('unconfined(mkdir -p key-dir/*)')
    await screenshot(page, '17-approval-rule-edited')
    // The same card at a phone's size: the rule field and the four answers stay within the screen.
    await page.setViewportSize({ width: 390, height: 844 })
    await banner.scrollIntoViewIfNeeded()
    const box = (await rule.boundingBox())!
    expect(box.x >= 0 && box.x + box.width <= 390).toBe(true)
    await screenshot(page, '17b-approval-rule-edited-phone')
    await page.setViewportSize({ width: 1280, height: 860 })
    await rule.blur()
    await page.keyboard.press('3')
    await expect.poll(() => turnEnds(page), WAIT).toBe(before + 1)
    expect((await grants()).at(-1)).toMatchObject({ rule: 'unconfined(mkdir -p key-dir/*)', scope: 'workspace' })
    const decided = (await logOf(own)).filter((event) => event.type === 'approval/decided').at(-1)!.data
    expect(decided).toMatchObject({ answer: 'allow_always', by: 'user', rule: 'unconfined(mkdir -p key-dir/*)' })
    expect(existsSync(join(web.workspace, 'key-dir', 'a'))).toBe(true)

    // Esc: reject; the command never ran.
    llm.enqueue(unconfined('echo no > key-rejected.txt'), { text: 'Not run.' })
    before = await turnEnds(page)
    await send(page, 'Write one more file outside the sandbox')
    await banner.waitFor(WAIT)
    await blur()
    await page.keyboard.press('Escape')
    await expect.poll(() => turnEnds(page), WAIT).toBe(before + 1)
    await banner.waitFor({ state: 'detached', ...WAIT })
    expect(await page.getByTestId('approval-decided').last().textContent()).toContain('Rejected by you')
    expect(existsSync(join(web.workspace, 'key-rejected.txt'))).toBe(false)
  })
})
