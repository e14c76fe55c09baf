import { spawn } from 'node:child_process'
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { expect, onTestFinished, test } from 'vitest'
import { startMockServer } from '@dsh/llm-mock-server'
import { appDir } from '@dsh/test-harness'

const EXTRA_FD = 251

// A descriptor dsh was started with (a terminal's or an IDE's pipe, a socket to a host service) is a way out
// of every namespace: a confined command writing to it writes on the host. The real launcher is started the
// way such a parent would start it, with one extra open descriptor (fd 251, a socket whose other end is this
// test; a high number, as a shell's saved descriptors are), and a confined command lists its own descriptors
// (`ls` in a child lists the shell's table into a file: a glob or a pipe in the shell would add its own
// descriptors) and writes to every
// one beyond stdio.
//
// Found by this suite (2026-12-01): bubblewrap passes inherited descriptors through, so fd 251 reached the
// command and its bytes arrived here. sandbox-local now closes every descriptor above stdio first thing
// inside the sandbox (src/descriptors.ts).
test('a descriptor dsh inherited does not reach a confined command: it lists only stdio and nothing arrives on the host', async () => {
  const llm = await startMockServer()
  onTestFinished(() => llm.close())
  const home = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-fd-home-')))
  const repo = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-fd-repo-')))
  onTestFinished(() => [home, repo].forEach((dir) => rmSync(dir, { recursive: true, force: true })))
  const command =
    'ls /proc/$$/fd > /tmp/fds; tr "\\n" " " < /tmp/fds; echo; for n in $(cat /tmp/fds); do [ "$n" -gt 2 ] && { echo "pwned through $n" >&$n; } 2>/dev/null; done; true'
  llm.enqueue({ toolCalls: [{ id: 'fds', name: 'bash', arguments: { command } }] }, { text: 'done' })
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    DSH_HOME: home,
    DEEPSEEK_BASE_URL: llm.url,
    DEEPSEEK_API_KEY: 'sk-descriptor-test-0123456789',
  }
  const child = spawn(process.execPath, [join(appDir, 'bin/dsh.js'), '--json', 'list your descriptors'], {
    cwd: repo,
    env,
    stdio: Object.assign(Array<'ignore' | 'pipe'>(EXTRA_FD + 1).fill('ignore'), {
      1: 'pipe',
      2: 'pipe',
      [EXTRA_FD]: 'pipe',
    }),
  })
  let stdout = ''
  let inherited = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk) => (stdout += chunk))
  ;(child.stdio as unknown as Readable[])[EXTRA_FD]!.setEncoding('utf8').on('data', (chunk) => (inherited += chunk))
  const code = await new Promise((resolve) => child.on('close', resolve))
  expect(code).toBe(0)
  const result = stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line))
    .find((event) => event.type === 'tool/result')
  const listed = result.data.content
    .map((block: { text?: string }) => block.text ?? '')
    .join('')
    .split('\n')[0]
    .trim()
    .split(' ')
  expect(inherited).toBe('')
  expect(listed).toEqual(['0', '1', '2'])
})
