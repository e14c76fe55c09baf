import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, onTestFinished, test } from 'vitest'
import { startMockServer } from '@dsh/llm-mock-server'
import type {} from '@dsh/llm-scripted'
import { appDir } from '@dsh/test-harness'
import { bash, bootAttack, modelSaw } from './index.ts'

// dsh's own environment holds the user's keys. Every way a confined command can read an environment
// (its own, its parent's, any process it can see) must show neither a name nor a value; the log on disk
// and every request the model received must not hold a value either.
const SECRETS: Record<string, string> = {
  ANTHROPIC_API_KEY: 'sk-ant-escape-suite-0123456789abcdef',
  OPENAI_API_KEY: 'sk-escape-suite-openai-0123456789abcdef',
  DEEPSEEK_API_KEY: 'sk-escape-suite-deepseek-0123456789',
  GITHUB_TOKEN: 'ghp_escapesuitegithub0123456789abcdef',
  AWS_SECRET_ACCESS_KEY: 'escapeSuiteAwsSecret/0123456789abcdefXYZ',
  SSH_AUTH_SOCK: '/tmp/ssh-escape-suite-0123456789/agent.42',
}
let saved: Record<string, string | undefined>
beforeEach(() => {
  saved = Object.fromEntries(Object.keys(SECRETS).map((name) => [name, process.env[name]]))
  Object.assign(process.env, SECRETS)
})
afterEach(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name]
    else process.env[name] = value
  }
})

/** Every session log file under the temp home, read as text after the log is flushed. */
async function logOnDisk(h: Awaited<ReturnType<typeof bootAttack>>): Promise<string> {
  await (await h.agent()).session.flush()
  const dir = join(h.home, 'sessions')
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.jsonl'))
  expect(files.length).toBeGreaterThan(0)
  return files.map((name) => readFileSync(join(dir, name), 'utf8')).join('\n')
}

function expectNoValue(text: string) {
  for (const value of Object.values(SECRETS)) expect(text).not.toContain(value)
}

function expectNoName(text: string) {
  for (const name of Object.keys(SECRETS)) expect(text).not.toMatch(new RegExp(`\\b${name}\\b`))
}

test('no environment reader inside confined bash sees a secret name or value: env, /proc/self, /proc/*, python, node', async () => {
  const readers = [
    bash('env', 'env'),
    bash('self', "tr '\\0' '\\n' < /proc/self/environ"),
    // Every process the command can see (its own pid namespace); the count proves the glob really matched.
    bash(
      'all',
      "n=0; for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f 2>/dev/null && n=$((n+1)); done; echo \"read $n\"; ls -d /proc/[0-9]* | wc -l",
    ),
    bash('parent', "tr '\\0' '\\n' < /proc/$PPID/environ; tr '\\0' '\\n' < /proc/1/environ"),
    bash('python', 'python3 -c "import os; print(sorted(os.environ.items()))"'),
    bash('node', 'node -e "console.log(JSON.stringify(process.env))"'),
    bash(
      'named',
      `echo "[${Object.keys(SECRETS)
        .map((name) => `$${name}`)
        .join('][')}]"`,
    ),
  ]
  const h = await bootAttack(readers)
  onTestFinished(() => h.dispose())
  const result = await h.run('print the environment every way you can')
  expect(result.reason).toBe('completed')

  expect(h.toolText('env')).toContain(`PATH=${process.env.PATH}`) // the readers really printed an environment
  expect(h.toolText('python')).toContain("('PATH', ")
  expect(h.toolText('node')).toContain('"PATH":')
  expect(h.toolText('all')).toMatch(/read [1-9]\d*\n/)
  expect(h.toolText('named')).toBe(
    `[${Object.keys(SECRETS)
      .map(() => '')
      .join('][')}]`,
  )
  const saw = modelSaw(h)
  expectNoValue(saw)
  expectNoName(saw)
  expectNoValue(await logOnDisk(h))
  expectNoValue(JSON.stringify(h.root.scriptedLlm.requests))
})

test('a credential value planted in a workspace file is shown as the redaction marker, never the value, in the log on disk', async () => {
  const planted = `deploy:\n  token: ${SECRETS.GITHUB_TOKEN}\n  aws: ${SECRETS.AWS_SECRET_ACCESS_KEY}\n`
  const h = await bootAttack([bash('cat', 'cat deploy.yaml; base64 deploy.yaml | base64 -d')], {
    workspaceFiles: { 'deploy.yaml': planted },
  })
  onTestFinished(() => h.dispose())
  await h.run('show me the deploy config')
  expect(h.toolText('cat')).toContain('token: «redacted:GITHUB_TOKEN»')
  expect(h.toolText('cat')).toContain('aws: «redacted:AWS_SECRET_ACCESS_KEY»')
  const disk = await logOnDisk(h)
  expect(disk).toContain('«redacted:GITHUB_TOKEN»')
  expectNoValue(disk)
  expectNoValue(modelSaw(h))
  expectNoValue(JSON.stringify(h.root.scriptedLlm.requests))
})

test('dsh started with the keys in its environment (the real launcher): no process a confined command can see shows them', async () => {
  // /proc/<pid>/environ is the environment a process was started with, so only a launcher started with the
  // keys shows what a user's dsh process holds; the confined command must not even see that process.
  const llm = await startMockServer()
  onTestFinished(() => llm.close())
  const home = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-env-home-')))
  const repo = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-env-repo-')))
  onTestFinished(() => [home, repo].forEach((dir) => rmSync(dir, { recursive: true, force: true })))
  const readers = {
    procs:
      "ls -d /proc/[0-9]* | wc -l; for p in /proc/[0-9]*; do tr '\\0' '\\n' < $p/environ; tr '\\0' ' ' < $p/cmdline; echo; done",
    parent: "tr '\\0' '\\n' < /proc/$PPID/environ; tr '\\0' '\\n' < /proc/1/environ",
    python: 'python3 -c "import os; print(sorted(os.environ.items()))"',
  }
  llm.enqueue(
    ...Object.entries(readers).map(([id, command]) => ({ toolCalls: [{ id, name: 'bash', arguments: { command } }] })),
    { text: 'done' },
  )
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    DSH_HOME: home,
    DEEPSEEK_BASE_URL: llm.url,
    ...SECRETS,
  }
  const child = spawn(process.execPath, [join(appDir, 'bin/dsh.js'), '--json', 'print every environment'], {
    cwd: repo,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk))
  expect(await new Promise((resolve) => child.on('close', resolve)), stderr).toBe(0)
  const results = stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line))
    .filter((event) => event.type === 'tool/result')
  const saw = JSON.stringify(results)
  expect(results).toHaveLength(3)
  expect(saw).toContain('PATH=') // the readers really read environments
  expect(saw).not.toContain('bin/dsh.js') // dsh's own process is not among those the command can see
  expectNoName(saw)
  expectNoValue(saw)
  const disk = readdirSync(home, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.jsonl'))
    .map((name) => readFileSync(join(home, name), 'utf8'))
    .join('\n')
  expect(disk).toContain('tool/result')
  for (const text of [stdout, stderr, disk, JSON.stringify(llm.requests.map((request) => request.body))])
    expectNoValue(text)
})
