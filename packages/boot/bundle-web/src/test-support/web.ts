// Test support for the web profile: the real `dsh --profile web` process, the mock model server it talks
// to, and Debian's Chromium driven by playwright-core. Only the model is fake.
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import { appDir, WITHOUT_AUTO_TITLE } from '@dsh/test-harness'
import { cookieName, signInWithLink } from '@dsh/webserver'

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '../../../../..')
export const cliBin = join(appDir, 'bin/dsh.js')
export const webDist = join(repoRoot, 'apps/web/dist/index.html')
/** Screenshots a reviewer can look at (gitignored). */
export const screenshotDir = join(repoRoot, 'test-output/web')

export const CHROMIUM = process.env.DSH_CHROMIUM ?? '/usr/bin/chromium'
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

export interface WebProcess {
  /** `http://127.0.0.1:<port>` */
  origin: string
  /** The printed sign-in link (`http://dsh:<code>@127.0.0.1:<port>/auth/link`): good once, for a minute. */
  link: string
  /** The `Cookie` header the test's own API calls send, once `signIn` or `adoptBrowserSignIn` set it. */
  cookie?: string
  home: string
  dshHome: string
  workspace: string
  child: ChildProcess
  stdout(): string
  stderr(): string
  /** The exit code, once the process has exited. */
  exited: Promise<number | null>
  /** SIGTERM (unless it already exited), then the exit code. */
  stop(): Promise<number | null>
}

export interface WebOptions {
  /** Extra environment (the mock server's URL, a key). */
  env?: Record<string, string>
  /** More arguments after `--profile web --no-open --port 0`. */
  args?: string[]
  /** A patch layer (YAML) written to the home and passed with --patch. */
  patch?: string
  /** Reuse folders (for a restart); created under one temp root otherwise. */
  home?: string
  workspace?: string
  startTimeoutMs?: number
}

/** A temp root holding a fake user home (the folder picker's root), its `.dsh` and a workspace inside it. */
export function tempHome(): { home: string; dshHome: string; workspace: string } {
  const home = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-web-home-')))
  const dshHome = join(home, '.dsh')
  const workspace = join(home, 'projects', 'demo')
  mkdirSync(dshHome, { recursive: true })
  mkdirSync(workspace, { recursive: true })
  return { home, dshHome, workspace }
}

/** Spawns `dsh --profile web --no-open --port 0` and waits for the URL it prints. */
export async function startWeb(options: WebOptions = {}): Promise<WebProcess> {
  const folders = options.home
    ? {
        home: options.home,
        dshHome: join(options.home, '.dsh'),
        workspace: options.workspace ?? join(options.home, 'projects', 'demo'),
      }
    : tempHome()
  const args = [cliBin, '--profile', 'web', '--no-open', '--port', '0', ...(options.args ?? [])]
  {
    // The title request is off, as in every test composition (WITHOUT_AUTO_TITLE).
    const file = join(folders.dshHome, 'test.patch.yml')
    mkdirSync(folders.dshHome, { recursive: true })
    writeFileSync(file, WITHOUT_AUTO_TITLE + (options.patch ?? ''))
    args.splice(1, 0, '--patch', file)
  }
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    LANG: 'C.UTF-8',
    HOME: folders.home,
    DSH_HOME: folders.dshHome,
    ...options.env,
  }
  const child = spawn(process.execPath, args, { cwd: folders.workspace, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout!.on('data', (chunk) => (out += chunk))
  child.stderr!.on('data', (chunk) => (err += chunk))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const link = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new Error(
            `dsh web printed no URL within ${options.startTimeoutMs ?? 40_000} ms\nstdout: ${out}\nstderr: ${err}`,
          ),
        ),
      options.startTimeoutMs ?? 40_000,
    )
    const look = () => {
      const match = /(http:\/\/dsh:\S+\/auth\/link)\s/.exec(out)
      if (match) {
        clearTimeout(timer)
        resolve(match[1]!)
      }
    }
    child.stdout!.on('data', look)
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`dsh web exited with ${code} before printing its URL\nstdout: ${out}\nstderr: ${err}`))
    })
  })
  return {
    origin: new URL(link).origin,
    link,
    ...folders,
    child,
    exited,
    stdout: () => out,
    stderr: () => err,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      return exited
    },
  }
}

/** Spends the printed link on the test's own sign-in (no browser then can use it). */
export async function signIn(web: WebProcess): Promise<void> {
  web.cookie = await signInWithLink(web.link)
}

/** The test's API calls use the browser's sign-in, read from its cookie jar (HttpOnly hides it from pages only). */
export async function adoptBrowserSignIn(web: WebProcess, context: BrowserContext): Promise<void> {
  const port = Number(new URL(web.origin).port)
  const cookie = (await context.cookies(web.origin)).find((entry) => entry.name === cookieName(port))
  if (!cookie)
    throw new Error(`the browser holds no ${cookieName(port)} cookie for ${web.origin}: did it open the link?`)
  web.cookie = `${cookie.name}=${cookie.value}`
}

export function removeHome(web: Pick<WebProcess, 'home'>): void {
  rmSync(web.home, { recursive: true, force: true })
}

/** Debian's Chromium, headless, on a fresh profile (playwright creates and removes its user data dir). */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`Chromium is not installed at ${CHROMIUM} (apt-get install chromium; .ci/run does)`)
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS })
}

/** The same Chromium on a profile kept in `userDataDir`, so a test can read what it wrote (History, cookies). */
export async function launchBrowserWithProfile(userDataDir: string): Promise<BrowserContext> {
  if (!existsSync(CHROMIUM))
    throw new Error(`Chromium is not installed at ${CHROMIUM} (apt-get install chromium; .ci/run does)`)
  return chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 860 },
  })
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(screenshotDir, { recursive: true })
  await page.screenshot({ path: join(screenshotDir, `${name}.png`) })
}

/** `POST /api/<method>` from the test, signed in with `web.cookie`. */
export async function api<T = any>(
  web: Pick<WebProcess, 'origin' | 'cookie'>,
  method: string,
  params: unknown = {},
): Promise<T> {
  if (!web.cookie) throw new Error(`api(${method}): the test has not signed in (signIn or adoptBrowserSignIn)`)
  const response = await fetch(`${web.origin}/api/${method}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Cookie: web.cookie },
    body: JSON.stringify(params),
  })
  const body = (await response.json()) as { ok: boolean; result?: T; error?: { code: string; message: string } }
  if (!body.ok)
    throw Object.assign(new Error(`${method}: ${body.error?.code} ${body.error?.message}`), { code: body.error?.code })
  return body.result as T
}

/** What most Chromium tests start from: the mock model, the real web process on a temp home, a signed-in page. */
export interface WebApp {
  llm: MockServer
  web: WebProcess
  browser: Browser
  page: Page
  /** Closes the browser, stops dsh and the mock server, and removes the temp home. */
  close(): Promise<void>
}

/**
 * Starts the mock model and `dsh --profile web` on a fresh temp home pointed at it (`prepare` may write into
 * the folders first, `patch` adds a layer), then Chromium on a 1280×860 page that opened the sign-in link.
 */
export async function openWebApp(
  options: { prepare?: (folders: ReturnType<typeof tempHome>) => void; patch?: string } = {},
): Promise<WebApp> {
  if (!existsSync(webDist)) throw new Error(`the web app is not built (${webDist} is missing): run npm run setup`)
  const llm = await startMockServer()
  const folders = tempHome()
  options.prepare?.(folders)
  const web = await startWeb({
    home: folders.home,
    workspace: folders.workspace,
    ...(options.patch ? { patch: options.patch } : {}),
    env: { DEEPSEEK_BASE_URL: llm.url, DEEPSEEK_API_KEY: 'test' },
  })
  const browser = await launchBrowser()
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage()
  await page.goto(web.link)
  await adoptBrowserSignIn(web, page.context())
  return {
    llm,
    web,
    browser,
    page,
    async close() {
      await browser.close()
      await web.stop()
      await llm.close()
      removeHome(web)
    },
  }
}
