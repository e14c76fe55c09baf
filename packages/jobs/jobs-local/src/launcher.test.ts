import { spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import { appDir } from '@dsh/test-harness'
import { eventually, processesWith, tempDir } from '@dsh/test-harness/world'

// The real launcher, as a user runs it: its jobs end when it exits normally and when it is told to stop.
let llm: MockServer
beforeEach(async () => {
  llm = await startMockServer()
})
afterEach(() => llm.close())

function dsh(args: string[]) {
  const home = tempDir('dsh-jobs-home-')
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    DSH_HOME: home,
    DEEPSEEK_BASE_URL: llm.url,
    DEEPSEEK_API_KEY: 'sk-mock-0123456789',
  }
  const child = spawn(process.execPath, [join(appDir, 'bin/dsh.js'), ...args], {
    cwd: tempDir('dsh-jobs-ws-'),
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk))
  const done = new Promise<{ code: number | null }>((resolve) => child.on('close', (code) => resolve({ code })))
  const events = () =>
    stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { type: string; data: any })
  // What the session's log holds on disk (events written while dsh drains come after --json's last line).
  const logged = () => {
    const file = readdirSync(join(home, 'sessions'), { recursive: true, encoding: 'utf8' }).find((name) =>
      name.endsWith('session.jsonl'),
    )!
    return readFileSync(join(home, 'sessions', file), 'utf8')
      .split('\n')
      .filter(Boolean)
      .slice(1)
      .map((line) => JSON.parse(line) as { type: string; data: any })
  }
  return { child, done, events, logged, stderr: () => stderr }
}

const server = () => `http.server ${20_000 + Math.floor(Math.random() * 20_000)}`
const startJob = (tag: string) => ({
  toolCalls: [
    { id: 'bg', name: 'bash', arguments: { command: `python3 -m ${tag} --bind 127.0.0.1`, run_in_background: true } },
  ],
})

test('when dsh exits after its task, the job it started is killed and logged as ended with the session', async () => {
  const tag = server()
  llm.enqueue(startJob(tag), { text: 'started it' })
  const run = dsh(['--json', 'start a server'])
  expect((await run.done).code, run.stderr()).toBe(0)
  expect(run.events().find((event) => event.type === 'job/started')).toBeDefined()
  expect(processesWith(tag)).toEqual([])
  expect(run.logged().find((event) => event.type === 'job/ended')?.data).toMatchObject({
    jobId: 'job-1',
    reason: 'session-ended',
  })
})

test('SIGTERM to dsh in the middle of a turn kills the running job before dsh exits 143', async () => {
  const tag = server()
  llm.enqueue(startJob(tag), { text: ['waiting', 'never'], stallAfterChunks: 1 })
  const run = dsh(['--json', 'start a server and wait'])
  expect(
    await eventually(
      () => processesWith(tag).length > 0 && run.events().filter((event) => event.type === 'step/start').length === 2,
      20_000,
    ),
    `${run.stderr()} ${run.events().map((event) => event.type)}`,
  ).toBe(true)
  run.child.kill('SIGTERM')
  expect((await run.done).code, run.stderr()).toBe(143)
  expect(processesWith(tag)).toEqual([])
  expect(run.logged().find((event) => event.type === 'job/ended')?.data).toMatchObject({
    jobId: 'job-1',
    reason: 'session-ended',
  })
})
