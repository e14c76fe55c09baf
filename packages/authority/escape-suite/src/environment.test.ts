import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, onTestFinished, test } from 'vitest'
import type {} from '@dsh/llm-scripted'
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
    bash('all', "n=0; for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f 2>/dev/null && n=$((n+1)); done; echo \"read $n\"; ls -d /proc/[0-9]* | wc -l"),
    bash('parent', "tr '\\0' '\\n' < /proc/$PPID/environ; tr '\\0' '\\n' < /proc/1/environ"),
    bash('python', 'python3 -c "import os; print(sorted(os.environ.items()))"'),
    bash('node', 'node -e "console.log(JSON.stringify(process.env))"'),
    bash('named', `echo "[${Object.keys(SECRETS).map((name) => `$${name}`).join('][')}]"`),
  ]
  const h = await bootAttack(readers)
  onTestFinished(() => h.dispose())
  const result = await h.run('print the environment every way you can')
  expect(result.reason).toBe('completed')

  expect(h.toolText('env')).toContain(`PATH=${process.env.PATH}`) // the readers really printed an environment
  expect(h.toolText('python')).toContain("('PATH', ")
  expect(h.toolText('node')).toContain('"PATH":')
  expect(h.toolText('all')).toMatch(/read [1-9]\d*\n/)
  expect(h.toolText('named')).toBe(`[${Object.keys(SECRETS).map(() => '').join('][')}]`)
  const saw = modelSaw(h)
  expectNoValue(saw)
  expectNoName(saw)
  expectNoValue(await logOnDisk(h))
  expectNoValue(JSON.stringify(h.root.scriptedLlm.requests))
})

test('a credential value planted in a workspace file is shown as the redaction marker, never the value, in the log on disk', async () => {
  const planted = `deploy:\n  token: ${SECRETS.GITHUB_TOKEN}\n  aws: ${SECRETS.AWS_SECRET_ACCESS_KEY}\n`
  const h = await bootAttack([bash('cat', 'cat deploy.yaml; base64 deploy.yaml | base64 -d')], { workspaceFiles: { 'deploy.yaml': planted } })
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
