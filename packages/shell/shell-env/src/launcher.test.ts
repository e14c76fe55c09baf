import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import { appDir } from '@dsh/test-harness'

// The real launcher, started the way a user starts it: with keys exported in its environment. (An in-process
// composition cannot show this: /proc/<pid>/environ holds the environment a process was started with.)
const SECRETS = {
  DEEPSEEK_API_KEY: 'sk-launcher-deepseek-0123456789',
  GITHUB_TOKEN: 'ghp_launchergithub0123456789',
  MY_SECRET: 'launcher-secret-0123456789',
}

let llm: MockServer
let home: string
let repo: string
beforeEach(async () => {
  llm = await startMockServer()
  home = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-env-home-')))
  repo = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-env-repo-')))
})
afterEach(async () => {
  await llm.close()
  rmSync(home, { recursive: true, force: true })
  rmSync(repo, { recursive: true, force: true })
})

function dsh(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    DSH_HOME: home,
    DEEPSEEK_BASE_URL: llm.url,
    ...SECRETS,
  }
  const child = spawn(process.execPath, [join(appDir, 'bin/dsh.js'), ...args], {
    cwd: repo,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk))
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })))
}

const everythingOnDisk = () =>
  readdirSync(home, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.jsonl') || name.endsWith('.json'))
    .map((name) => readFileSync(join(home, name), 'utf8'))
    .join('\n')

const bash = (id: string, command: string) => ({ toolCalls: [{ id, name: 'bash', arguments: { command } }] })

test("even with full access, a command reading dsh's own environment from /proc shows markers: no value reaches the model, the log or the output", async () => {
  llm.enqueue(bash('proc', 'tr "\\0" "\\n" < /proc/$PPID/environ'), bash('env', 'env'), { text: 'done' })
  const run = await dsh(['--json', '--permission', 'danger-full-access', 'look at the environment'])
  expect(run.code, run.stderr).toBe(0)
  const results = run.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line))
    .filter((event) => event.type === 'tool/result')
  const [proc, env] = results.map((event) => event.data.content.map((block: any) => block.text).join(''))
  expect(proc).toContain('GITHUB_TOKEN=«redacted:GITHUB_TOKEN»')
  expect(proc).toContain('MY_SECRET=«redacted:MY_SECRET»')
  expect(env).toContain('PATH=')
  for (const name of Object.keys(SECRETS)) expect(env).not.toContain(name)
  const requests = JSON.stringify(llm.requests.map((request) => request.body))
  for (const text of [run.stdout, run.stderr, everythingOnDisk(), requests]) {
    for (const value of Object.values(SECRETS)) expect(text).not.toContain(value)
  }
})

test('`dsh sessions show --audit` lists the command environment policy by name', async () => {
  llm.enqueue(bash('one', 'true'), { text: 'done' })
  const run = await dsh(['--json', 'run one command'])
  expect(run.code, run.stderr).toBe(0)
  const sessionId = JSON.parse(run.stdout.split('\n')[0]!).sessionId
  const audit = await dsh(['sessions', 'show', sessionId, '--audit'])
  expect(audit.code, audit.stderr).toBe(0)
  expect(audit.stdout).toMatch(
    /command environment inherits (\w+, )*PATH(, \w+)*; sets nothing; include nothing; exclude nothing; withheld (\w+, )*DEEPSEEK_API_KEY, GITHUB_TOKEN, MY_SECRET/,
  )
  for (const value of Object.values(SECRETS)) expect(audit.stdout).not.toContain(value)
})
