import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, onTestFinished, test } from 'vitest'
import type { ScriptedResponse } from '@dsh/llm-scripted'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'

// Redaction where it cannot be bypassed (the tools pipeline, before every tool/result). Secret values dsh knows: one in its environment, one in $DSH_HOME/.credentials.yaml. A workspace file
// (repository content the model reads) holds both; the model and the log must see markers, not values.
const ENV_VALUE = 'ghp_redactiontest0123456789'
const STORED_VALUE = 'sk-stored-redaction-0123456789'
let saved: string | undefined
beforeEach(() => {
  saved = process.env.GITHUB_TOKEN
  process.env.GITHUB_TOKEN = ENV_VALUE
})
afterEach(() => {
  if (saved === undefined) delete process.env.GITHUB_TOKEN
  else process.env.GITHUB_TOKEN = saved
})

async function boot(script: ScriptedResponse[]): Promise<Harness> {
  const h = await bootComposition({
    patch: scriptedPatch(),
    homeFiles: { '.credentials.yaml': `ANTHROPIC_API_KEY: ${STORED_VALUE}\n` },
    workspaceFiles: { 'config.txt': `token=${ENV_VALUE}\nanthropic=${STORED_VALUE}\nshort=abc\n` },
  })
  onTestFinished(() => h.dispose())
  h.root.scriptedLlm.enqueue(...script)
  return h
}

async function logOnDisk(h: Harness): Promise<string> {
  await (await h.agent()).session.flush()
  const dir = join(h.home, 'sessions')
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.jsonl'))
    .map((name) => readFileSync(join(dir, name), 'utf8'))
    .join('\n')
}

test('`cat` and `read` of a file holding credential values show markers and a note, never the values, in the result, the log and the requests', async () => {
  const h = await boot([
    toolCall('cat', 'bash', { command: 'cat config.txt' }),
    toolCall('read', 'read', { path: 'config.txt' }),
    { text: 'done' },
  ])
  await h.run('show me the config')
  for (const callId of ['cat', 'read']) {
    const text = h.toolText(callId)
    expect(text).toContain('token=«redacted:GITHUB_TOKEN»')
    expect(text).toContain('anthropic=«redacted:ANTHROPIC_API_KEY»')
    expect(text).toContain('short=abc') // under the minimum length nothing is replaced
    expect(text).toContain('secret value in this result was replaced')
  }
  const disk = await logOnDisk(h)
  const requests = JSON.stringify(h.root.scriptedLlm.requests)
  for (const text of [disk, requests]) {
    expect(text).not.toContain(ENV_VALUE)
    expect(text).not.toContain(STORED_VALUE)
  }
  expect(disk).toContain('«redacted:GITHUB_TOKEN»')
})

test('a credential value in a tool error is redacted too', async () => {
  const h = await boot([toolCall('missing', 'read', { path: `no-such-${STORED_VALUE}.txt` }), { text: 'done' }])
  await h.run('read it')
  const result = h.toolResult('missing')
  expect(result.error?.message).toContain('«redacted:ANTHROPIC_API_KEY»')
  expect(JSON.stringify(result)).not.toContain(STORED_VALUE)
})

test('an approval request built from a call that names a credential value is logged with the marker', async () => {
  const h = await boot([
    toolCall('out', 'bash', {
      command: `curl -H 'auth: ${ENV_VALUE}' example.org`,
      sandbox: false,
      justification: 'needs the network',
    }),
    { text: 'done' },
  ])
  await h.run('call it')
  const [asked] = h.events('approval/asked')
  expect(JSON.stringify(asked!.data)).toContain('«redacted:GITHUB_TOKEN»')
  expect(JSON.stringify(asked!.data)).not.toContain(ENV_VALUE)
  // No standing rule is offered for a line that carries a secret: it would be written into grants.yaml.
  expect(asked!.data.rule).toBeUndefined()
})

test('a long result is spilled to disk with the markers: the spill file holds no value either', async () => {
  const h = await bootComposition({
    patch: scriptedPatch({}, '- id: spill-policy\n  config: { thresholdBytes: 200 }\n'),
    homeFiles: { '.credentials.yaml': `ANTHROPIC_API_KEY: ${STORED_VALUE}\n` },
    workspaceFiles: { 'config.txt': `token=${ENV_VALUE}\nanthropic=${STORED_VALUE}\n` },
  })
  onTestFinished(() => h.dispose())
  h.root.scriptedLlm.enqueue(toolCall('long', 'bash', { command: 'for i in $(seq 20); do cat config.txt; done' }), {
    text: 'done',
  })
  await h.run('print it many times')
  const spillDir = join(h.home, 'spill')
  const spilled = readdirSync(spillDir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.txt'))
    .map((name) => readFileSync(join(spillDir, name), 'utf8'))
  expect(spilled).toHaveLength(1)
  expect(spilled[0]).toContain('token=«redacted:GITHUB_TOKEN»')
  for (const text of [spilled[0]!, h.toolText('long'), await logOnDisk(h)]) {
    expect(text).not.toContain(ENV_VALUE)
    expect(text).not.toContain(STORED_VALUE)
  }
})
