import { spawn, spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createServer } from 'node:net'
import { afterEach, expect, test } from 'vitest'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import { signInWithLink } from '@dsh/webserver'
import { api, cliBin, removeHome, signIn, startWeb, tempHome, type WebProcess } from './test-support/web.ts'

// The launcher and the web surface as processes: what `--check`, a busy port and Ctrl+C do.
let web: WebProcess | undefined
let llm: MockServer | undefined
afterEach(async () => {
  await web?.stop()
  if (web) removeHome(web)
  await llm?.close()
  web = llm = undefined
})

test('--check lists the web rows without binding a port, printing a URL or opening a browser', () => {
  const folders = tempHome()
  try {
    const result = spawnSync(process.execPath, [cliBin, '--profile', 'web', '--check'], {
      cwd: folders.workspace,
      env: { PATH: process.env.PATH, HOME: folders.home, DSH_HOME: folders.dshHome, BROWSER: 'false' },
      encoding: 'utf8',
    })
    expect(result.status).toBe(0)
    expect(result.stdout).toMatch(/^webserver\t@dsh\/webserver\tactive$/m)
    expect(result.stdout).toMatch(/^web-app\t@dsh\/web-app\tactive$/m)
    expect(result.stdout).not.toContain('http://')
  } finally {
    removeHome(folders)
  }
})

test('a busy port ends the launch with exit 1 and a message naming the port', async () => {
  const blocker = createServer()
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
  const port = (blocker.address() as { port: number }).port
  const folders = tempHome()
  try {
    const result = spawnSync(process.execPath, [cliBin, 'web', '--no-open', '--port', String(port)], {
      cwd: folders.workspace,
      env: { PATH: process.env.PATH, HOME: folders.home, DSH_HOME: folders.dshHome },
      encoding: 'utf8',
      timeout: 20_000,
    })
    expect(result.status).toBe(1)
    expect(result.stderr).toContain(`port ${port} on 127.0.0.1 is in use`)
    expect(result.stdout).not.toContain('http://')
  } finally {
    blocker.close()
    removeHome(folders)
  }
})

test('a flag the web profile does not know is refused by name', () => {
  const folders = tempHome()
  try {
    const result = spawnSync(process.execPath, [cliBin, 'web', '--prot', '3'], {
      cwd: folders.workspace,
      env: { PATH: process.env.PATH, HOME: folders.home, DSH_HOME: folders.dshHome },
      encoding: 'utf8',
      timeout: 20_000,
    })
    expect(result.status).not.toBe(0)
    expect(result.stderr).toContain("Unknown option '--prot'")
  } finally {
    removeHome(folders)
  }
})

test('Ctrl+C during a turn logs its end before exiting, and the session reopens idle', async () => {
  llm = await startMockServer()
  llm.enqueue({ text: 'Working on it, slowly', stallAfterChunks: 3 })
  web = await startWeb({ env: { DEEPSEEK_BASE_URL: llm.url, DEEPSEEK_API_KEY: 'test' } })
  await signIn(web)
  const { sessionId } = await api(web, 'sessions.create', { cwd: web.workspace })
  await api(web, 'agent.send', { sessionId, text: 'take your time' })
  await llm.waitForRequests(1, 40_000)
  web.child.kill('SIGINT')
  expect(await web.exited).toBe(130)

  const again = await startWeb({ home: web.home, workspace: web.workspace })
  await signIn(again)
  try {
    const page = await api(again, 'sessions.page', { sessionId })
    const ends = page.events.filter((event: { type: string }) => event.type === 'turn/end')
    // dsh stopped under the turn (not the user's cancel): it ends interrupted, and the page offers to continue it.
    expect(ends.map((event: { data: { reason: string } }) => event.data.reason)).toEqual(['interrupted'])
    expect((await api(again, 'sessions.list')).sessions[0]).toMatchObject({
      id: sessionId,
      status: 'idle',
      lockedElsewhere: false,
    })
  } finally {
    await again.stop()
  }
})

// util-linux `script` gives the launcher a terminal, as a user's shell does.
test.skipIf(!existsSync('/usr/bin/script'))(
  'Enter in the terminal prints a fresh link, and each link signs in a browser',
  async () => {
    const folders = tempHome()
    const command = `'${process.execPath}' '${cliBin}' web --no-open --port 0`
    const child = spawn('/usr/bin/script', ['-qfec', command, '/dev/null'], {
      cwd: folders.workspace,
      env: { PATH: process.env.PATH, HOME: folders.home, DSH_HOME: folders.dshHome },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let out = ''
    child.stdout.on('data', (chunk) => (out += chunk))
    const links = async (count: number) => {
      const deadline = Date.now() + 40_000
      while (Date.now() < deadline) {
        const found = [...out.matchAll(/http:\/\/dsh:\S+\/auth\/link/g)].map((match) => match[0])
        if (found.length >= count) return found
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      throw new Error(`wanted ${count} links, got: ${out}`)
    }
    try {
      const [first] = await links(1)
      expect(out).toContain('Press Enter for a new link')
      child.stdin.write('\n')
      const [, second] = await links(2)
      expect(out).toContain(`New link (single use, 60 s): ${second}`)
      expect(new URL(second!).password).not.toBe(new URL(first!).password)
      expect(await signInWithLink(second!)).toMatch(/^dsh_web_\d+=/)
      expect(await signInWithLink(first!)).toMatch(/^dsh_web_\d+=/)
    } finally {
      child.kill('SIGTERM')
      await new Promise((resolve) => child.once('exit', resolve))
      removeHome(folders)
    }
  },
)
