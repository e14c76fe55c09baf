import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, onTestFinished, test } from 'vitest'
import type { ScriptedResponse } from '@dsh/llm-scripted'
import { bootComposition, scriptedPatch, toolCall, type CompositionOptions, type Harness } from '@dsh/test-harness'
import type {} from './index.ts'

// dsh's own environment holds the user's keys; nothing a model-started process prints may show them.
const SECRETS = {
  DEEPSEEK_API_KEY: 'sk-env-test-deepseek-0123456789',
  GITHUB_TOKEN: 'ghp_envtestgithub0123456789',
  MY_SECRET: 'my-secret-value-0123456789',
  SSH_AUTH_SOCK: '/tmp/ssh-envtest-0123456789/agent.1',
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

const PERSISTENT = `- id: tool-bash
  name: '@dsh/tool-bash-persistent'
`

async function boot(
  script: ScriptedResponse[],
  options: CompositionOptions & { rows?: string } = {},
): Promise<Harness> {
  const h = await bootComposition({ ...options, patch: scriptedPatch({}, options.rows ?? '') })
  onTestFinished(() => h.dispose())
  h.root.scriptedLlm.enqueue(...script)
  return h
}

/** Everything written to disk for the session, as text. */
async function logOnDisk(h: Harness): Promise<string> {
  await (await h.agent()).session.flush()
  const dir = join(h.home, 'sessions')
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.jsonl'))
    .map((name) => readFileSync(join(dir, name), 'utf8'))
    .join('\n')
}

const requestsSeen = (h: Harness) => JSON.stringify(h.root.scriptedLlm.requests)

function expectNoSecret(text: string, { names = true } = {}) {
  for (const [name, value] of Object.entries(SECRETS)) {
    expect(text).not.toContain(value)
    if (names) expect(text).not.toMatch(new RegExp(`\\b${name}=`))
  }
}

for (const [shell, rows] of [
  ['one-shot', ''],
  ['persistent', PERSISTENT],
] as const) {
  test(`in the ${shell} shell \`env\` shows no secret-looking variable, and neither the log on disk nor any request holds a value`, async () => {
    const h = await boot(
      [toolCall('env', 'bash', { command: 'env; echo "[$GITHUB_TOKEN][$DEEPSEEK_API_KEY]"' }), { text: 'done' }],
      { rows },
    )
    await h.run('print the environment')
    const output = h.toolText('env')
    expect(output).toContain(`PATH=${process.env.PATH}`)
    expect(output).toContain('PAGER=cat')
    expect(output).toContain('[][]')
    expectNoSecret(output)
    expectNoSecret(await logOnDisk(h), { names: false })
    expectNoSecret(requestsSeen(h))
  })
}

test('the policy is logged once per session by name only, and the names withheld are listed', async () => {
  const h = await boot([
    toolCall('a', 'bash', { command: 'true' }),
    toolCall('b', 'bash', { command: 'true' }),
    { text: 'done' },
  ])
  await h.run('twice')
  const logged = h.events('shell/env-policy')
  expect(logged).toHaveLength(1)
  expect(logged[0]!.data).toMatchObject({
    set: [],
    include: [],
    exclude: [],
    dropped: expect.arrayContaining(Object.keys(SECRETS)),
  })
  expect(logged[0]!.data.inherited).toContain('PATH')
  expectNoSecret(JSON.stringify(logged[0]!.data), { names: false })
  expect(logged[0]!.seq).toBeLessThan(h.events('tool/result')[0]!.seq)
})

test('shell.env.include, exclude and set change what `env` prints; a secret-looking include stays withheld', async () => {
  const settings = `shell.env.include: [dsh_visible_*, GITHUB_TOKEN]\nshell.env.exclude: [LANG, DSH_VISIBLE_HIDDEN]\nshell.env.set: { CHOSEN_BY_USER: chosen-value-42 }\n`
  process.env.DSH_VISIBLE_ONE = 'shown-1'
  process.env.DSH_VISIBLE_HIDDEN = 'hidden-2'
  process.env.LANG = process.env.LANG ?? 'C.UTF-8'
  onTestFinished(() => {
    delete process.env.DSH_VISIBLE_ONE
    delete process.env.DSH_VISIBLE_HIDDEN
  })
  const h = await boot([toolCall('env', 'bash', { command: 'env' }), { text: 'done' }], {
    homeFiles: { 'settings.yaml': settings },
  })
  await h.run('print the environment')
  const output = h.toolText('env')
  expect(output).toContain('DSH_VISIBLE_ONE=shown-1')
  expect(output).toContain('CHOSEN_BY_USER=chosen-value-42')
  expect(output).not.toContain('DSH_VISIBLE_HIDDEN')
  expect(output).not.toMatch(/^LANG=/m)
  expectNoSecret(output)
  const [policy] = h.events('shell/env-policy')
  expect(policy!.data).toMatchObject({
    include: ['dsh_visible_*', 'GITHUB_TOKEN'],
    exclude: ['LANG', 'DSH_VISIBLE_HIDDEN'],
    set: ['CHOSEN_BY_USER'],
  })
  expect(policy!.data.dropped).toEqual(expect.arrayContaining(['DSH_VISIBLE_HIDDEN', 'GITHUB_TOKEN', 'LANG']))
  expect(JSON.stringify(policy!.data)).not.toContain('chosen-value-42')
  expect(JSON.stringify(policy!.data)).not.toContain('shown-1')
})

test('a changed setting takes effect at the next command and is logged again', async () => {
  const h = await boot([
    toolCall('before', 'bash', { command: 'echo "[$LATER]"' }),
    { text: 'ok' },
    toolCall('after', 'bash', { command: 'echo "[$LATER]"' }),
    { text: 'ok' },
  ])
  await h.run('first')
  await h.root.settings.set('shell.env.set', { LATER: 'now-set' })
  await h.run('second')
  expect(h.toolText('before')).toBe('[]')
  expect(h.toolText('after')).toContain('[now-set]')
  expect(h.events('shell/env-policy').map((event) => event.data.set)).toEqual([[], ['LATER']])
})

test('a secret-looking name in shell.env.set is refused at boot, naming the file, the setting and the name', async () => {
  const booting = bootComposition({
    patch: scriptedPatch(),
    homeFiles: { 'settings.yaml': 'shell.env.set: { API_TOKEN: abc }\n' },
  })
  await expect(booting).rejects.toThrow(/settings\.yaml:1: shell\.env\.set: set: "API_TOKEN" looks like a secret/)
})

const EVERY_ENVIRON = 'for f in /proc/[0-9]*/environ; do tr "\\0" "\\n" < "$f"; done 2>/dev/null; true'

test("a confined command reading every /proc/*/environ finds no secret: dsh's own process is out of its sight", async () => {
  const h = await boot([toolCall('proc', 'bash', { command: EVERY_ENVIRON }), { text: 'done' }])
  await h.run('look around')
  const output = h.toolText('proc')
  expect(output).toContain('PATH=')
  expectNoSecret(output)
})

test('a resumed session whose policy did not change does not log it again', async () => {
  const home = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-home-')))
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-ws-')))
  onTestFinished(() => {
    rmSync(home, { recursive: true, force: true })
    rmSync(workspace, { recursive: true, force: true })
  })
  const first = await bootComposition({ home, workspace, patch: scriptedPatch() })
  first.root.scriptedLlm.enqueue(toolCall('a', 'bash', { command: 'true' }), { text: 'ok' })
  await first.run('first')
  const id = (await first.agent()).session.id
  await first.dispose()

  const second = await bootComposition({ home, workspace, patch: scriptedPatch() })
  onTestFinished(() => second.dispose())
  second.root.scriptedLlm.enqueue(toolCall('b', 'bash', { command: 'true' }), { text: 'ok' })
  const resumed = await second.root.agents.resume(id)
  resumed.followup('again')
  await resumed.whenIdle()
  expect(resumed.session.all('shell/env-policy')).toHaveLength(1)
  expect(resumed.session.all('tool/result')).toHaveLength(2)
})

test('a record with a value, or not a list of names, is refused, naming the field', async () => {
  const h = await boot([])
  const session = (await h.agent()).session
  const record = { inherited: ['PATH'], set: [], include: [], exclude: [], dropped: [] }
  expect(() => session.append('shell/env-policy', { ...record, values: { PATH: '/bin' } } as never)).toThrow(
    'data.values is not a field of an environment policy record (inherited, set, include, exclude, dropped)',
  )
  expect(() => session.append('shell/env-policy', { ...record, dropped: [1] as never })).toThrow(
    'data.dropped[0] must be a string',
  )
  expect(h.events('shell/env-policy')).toEqual([])
})
