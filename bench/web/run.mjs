// The web surface as a user meets it: `dsh web` from launch to the port answering, the first paint of a
// stored 5k-event session in Chromium, and how many log events per second reach two connected tabs while a
// model streams (the mock server answering as fast as it can, so the numbers are the harness's).
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'
import { startMockServer } from '@dsh/llm-mock-server'
import { bootComposition } from '@dsh/test-harness'
import { ms, summarize } from '../stats.mjs'

const repo = join(fileURLToPath(import.meta.url), '../../..')
const cli = join(repo, 'apps/cli/bin/dsh.js')
const LAUNCHES = 7
const PAINTS = 7
const SESSION_EVENTS = 5000
const STREAM_CHARS = 60_000
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]
const now = () => performance.now()

function folders() {
  const home = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-bench-web-')))
  const workspace = join(home, 'work')
  mkdirSync(join(home, '.dsh'), { recursive: true })
  mkdirSync(workspace)
  return { home, dshHome: join(home, '.dsh'), workspace }
}

/** Spawns `dsh web` and resolves with the printed sign-in link and the time until the port answered a request. */
async function launch({ home, dshHome, workspace }, env = {}) {
  const started = now()
  const child = spawn(process.execPath, [cli, 'web', '--no-open', '--port', '0'], {
    cwd: workspace,
    env: { PATH: process.env.PATH, HOME: home, DSH_HOME: dshHome, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  child.stderr.on('data', (chunk) => (err += chunk))
  const url = await new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      out += chunk
      const match = /(http:\/\/dsh:\S+\/auth\/link)\s/.exec(out)
      if (match) resolve(match[1])
    })
    child.once('exit', (code) => reject(new Error(`dsh web exited ${code}: ${err}`)))
  })
  const origin = new URL(url).origin
  const response = await fetch(`${origin}/`)
  await response.arrayBuffer()
  const answered = now() - started
  const stop = () => new Promise((resolve) => (child.once('exit', resolve), child.kill('SIGTERM')))
  return { url, origin, cookie: '', answered, stop }
}

/** A browser context signed in with the printed link (spending it); `web.cookie` then signs the bench's calls. */
async function signedIn(browser, web) {
  const context = await browser.newContext()
  const page = await context.newPage()
  await page.goto(web.url)
  const cookie = (await context.cookies(web.origin)).find((entry) => entry.name.startsWith('dsh_web_'))
  if (!cookie) throw new Error('the sign-in link set no cookie')
  web.cookie = `${cookie.name}=${cookie.value}`
  return { context, page }
}

async function call(web, method, params = {}) {
  const response = await fetch(`${web.origin}/api/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: web.cookie },
    body: JSON.stringify(params),
  })
  const body = await response.json()
  if (!body.ok) throw new Error(`${method}: ${body.error.message}`)
  return body.result
}

/** A stored session of `count` events (4 per turn), written through the real session service. */
async function storedSession({ dshHome, workspace }, count) {
  const h = await bootComposition({
    profile: 'web',
    home: dshHome,
    workspace,
    argv: ['--port', '0'],
    patch: '- id: webserver\n  config: { announce: false, open: false }\n',
  })
  const session = await h.root.sessions.create({ cwd: workspace })
  for (let i = 0; i < count / 4; i++) {
    session.append('turn/start', { turnId: `t${i}` })
    session.append('user/message', {
      content: [{ type: 'text', text: `Question ${i}: what does this function do?` }],
      source: 'user',
    })
    session.append('assistant/message', {
      content: [{ type: 'text', text: `It parses the **input** and returns \`${i}\`.\n\n- first\n- second` }],
      usage: { input: 100, output: 20, cacheRead: 0, cacheWrite: 0 },
      finish: 'stop',
    })
    session.append('turn/end', { turnId: `t${i}`, reason: 'completed' })
  }
  await session.flush()
  await h.root.sessions.close(session.id)
  await h.dispose()
  return session.id
}

async function launchTimes() {
  const samples = []
  for (let i = 0; i < LAUNCHES; i++) {
    const dirs = folders()
    const web = await launch(dirs)
    samples.push(web.answered)
    await web.stop()
    rmSync(dirs.home, { recursive: true, force: true })
  }
  return summarize(samples)
}

async function firstPaint(browser) {
  const dirs = folders()
  const id = await storedSession(dirs, SESSION_EVENTS)
  const web = await launch(dirs)
  const { context, page } = await signedIn(browser, web)
  try {
    await page.getByRole('heading', { name: 'What should dsh work on?' }).waitFor()
    const last = `Question ${SESSION_EVENTS / 4 - 1}:`
    const samples = []
    for (let i = 0; i < PAINTS; i++) {
      const started = now()
      await page.goto(`${web.origin}/s/${id}`)
      await page.locator('[data-testid="user-message"]', { hasText: last }).waitFor()
      samples.push(now() - started)
    }
    return summarize(samples)
  } finally {
    await context.close()
    await web.stop()
    rmSync(dirs.home, { recursive: true, force: true })
  }
}

/** Events per second delivered to each of two tabs watching one session while the model streams. */
async function fanOut(browser) {
  const llm = await startMockServer({ chunkChars: 8 })
  const dirs = folders()
  const web = await launch(dirs, { DEEPSEEK_BASE_URL: llm.url, DEEPSEEK_API_KEY: 'bench' })
  // Two tabs of one browser: the first spends the link, the second rides on the cookie.
  const { context, page: first } = await signedIn(browser, web)
  const { sessionId } = await call(web, 'sessions.create', { cwd: dirs.workspace })
  const tabs = []
  for (let i = 0; i < 2; i++) {
    const page = i === 0 ? first : await context.newPage()
    const tab = { page, events: 0, messages: 0, first: 0, last: 0, ended: false }
    page.on('websocket', (socket) =>
      socket.on('framereceived', ({ payload }) => {
        const frames = JSON.parse(String(payload))
        const events = frames.filter((frame) => frame.ch === 'session' && frame.type === 'event')
        if (!events.length) return
        tab.first ||= now()
        tab.last = now()
        tab.messages++
        tab.events += events.length
        if (events.some((frame) => frame.event.type === 'turn/end')) tab.ended = true
      }),
    )
    await page.goto(`${web.origin}/s/${sessionId}`)
    await page.getByLabel('Message').waitFor()
    tabs.push(tab)
  }
  llm.enqueue({ text: 'x'.repeat(STREAM_CHARS) })
  const started = now()
  await call(web, 'agent.send', { sessionId, text: 'stream a long answer' })
  while (!tabs.every((tab) => tab.ended)) await new Promise((resolve) => setTimeout(resolve, 20))
  const wall = now() - started
  const modelMs = llm.requests.reduce((sum, request) => sum + (request.timing.endedAt - request.timing.receivedAt), 0)
  await context.close()
  await web.stop()
  await llm.close()
  rmSync(dirs.home, { recursive: true, force: true })
  return { tabs, wall, modelMs }
}

export default async function run() {
  const launchStats = await launchTimes()
  const browser = await chromium.launch({
    executablePath: process.env.DSH_CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: CHROMIUM_ARGS,
  })
  let paint
  let fan
  try {
    paint = await firstPaint(browser)
    fan = await fanOut(browser)
  } finally {
    await browser.close()
  }
  const rate = (tab) => Math.round(tab.events / ((tab.last - tab.first) / 1000))
  return [
    '## Web surface (bench/web)',
    '',
    '| measurement | median | p90 |',
    '|---|---|---|',
    `| \`dsh web\` launch → the port answers \`GET /\` (${LAUNCHES} launches) | ${ms(launchStats.median)} | ${ms(launchStats.p90)} |`,
    `| open a stored ${SESSION_EVENTS.toLocaleString('en')}-event session → its last message painted in Chromium (${PAINTS} loads) | ${ms(paint.median)} | ${ms(paint.p90)} |`,
    '',
    `Fan-out: one turn streaming ${STREAM_CHARS.toLocaleString('en')} characters (mock DeepSeek, ${fan.tabs[0].events.toLocaleString('en')} log events) to two tabs of one session.`,
    '',
    '| tab | events received | WebSocket messages | events/s |',
    '|---|---|---|---|',
    ...fan.tabs.map(
      (tab, index) =>
        `| ${index + 1} | ${tab.events.toLocaleString('en')} | ${tab.messages.toLocaleString('en')} | ${rate(tab).toLocaleString('en')} |`,
    ),
    '',
    `The turn took ${ms(fan.wall)} wall time, of which the mock server streamed for ${ms(fan.modelMs)} (${(fan.wall / Math.max(1, fan.modelMs)).toFixed(2)}×).`,
  ].join('\n')
}
