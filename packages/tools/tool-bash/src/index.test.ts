import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { expect, onTestFinished, test } from 'vitest'
import type {} from '@dsh/approval'
import type { ScriptedResponse } from '@dsh/llm-scripted'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'
import { outsideDir, processesWith, tempDir } from '@dsh/test-harness/world'

async function boot(script: ScriptedResponse[], patch = ''): Promise<Harness> {
  const h = await bootComposition({ patch: scriptedPatch({}, patch) })
  onTestFinished(() => h.dispose())
  h.root.scriptedLlm.enqueue(...script)
  return h
}

const bash = (args: Record<string, unknown>, id = 'b') => toolCall(id, 'bash', args)

test('under bubblewrap a command writes in the workspace, and its write outside is refused and absent', async () => {
  const outside = outsideDir()
  const h = await boot([bash({ command: `echo in > inside.txt; echo out > ${outside}/pwned.txt` }), { text: 'done' }])
  await h.run('write both')
  expect(readFileSync(join(h.workspace, 'inside.txt'), 'utf8')).toBe('in\n')
  expect(existsSync(join(outside, 'pwned.txt'))).toBe(false)
  expect(h.toolText('b')).toMatch(/Read-only file system\n\[Exit code 1\]$/)
  expect(h.events('sandbox/probe')[0]!.data).toMatchObject({ backend: 'bubblewrap', available: true })
})

test('a command asking to run outside the sandbox runs only after allow_once, and only that call is unconfined', async () => {
  const outside = outsideDir()
  const h = await boot([
    bash(
      {
        command: `echo yes > ${outside}/approved.txt`,
        sandbox: false,
        justification: 'write the release notes next to the repo',
      },
      'free',
    ),
    bash({ command: `echo no > ${outside}/after.txt` }, 'confined'),
    { text: 'done' },
  ])
  const asked: string[] = []
  h.root.approval.answerer(
    h.root,
    async (request) => (asked.push(`${request.summary} | ${request.reason}`), 'allow_once'),
  )
  await h.run('write outside')
  expect(readFileSync(join(outside, 'approved.txt'), 'utf8')).toBe('yes\n')
  expect(h.toolText('free')).toBe('(no output)\n[Ran outside the sandbox, as approved.]')
  expect(asked).toEqual([
    `bash: echo yes > ${outside}/approved.txt [outside the sandbox] | it asks to run outside the sandbox (the session's mode is workspace-write): write the release notes next to the repo`,
  ])
  expect(existsSync(join(outside, 'after.txt'))).toBe(false)
})

test('a command asking to run outside the sandbox does not run when the user rejects it', async () => {
  const outside = outsideDir()
  const h = await boot([
    bash({ command: `echo x > ${outside}/rejected.txt`, sandbox: false, justification: 'needs it' }),
    { text: 'ok' },
  ])
  h.root.approval.answerer(h.root, async () => 'reject')
  await h.run('try')
  expect(existsSync(join(outside, 'rejected.txt'))).toBe(false)
  expect(h.toolResult('b').error?.code).toBe('APPROVAL_REJECTED')
  expect(h.events('approval/decided')[0]!.data).toMatchObject({ answer: 'reject', by: 'user' })
  expect(h.types()).not.toContain('tool/dispatched')
})

test('a command asking to run outside the sandbox does not run when nobody can answer', async () => {
  const outside = outsideDir()
  const h = await boot([
    bash({ command: `echo x > ${outside}/unanswered.txt`, sandbox: false, justification: 'needs it' }),
    { text: 'ok' },
  ])
  await h.run('try')
  expect(existsSync(join(outside, 'unanswered.txt'))).toBe(false)
  expect(h.toolResult('b').error?.message).toMatch(/not approved: nobody can answer approvals here/)
  expect(h.events('approval/decided')[0]!.data).toMatchObject({ answer: 'reject', by: 'no-answerer' })
})

test('sandbox: false without a justification is refused before anyone is asked', async () => {
  const h = await boot([bash({ command: 'true', sandbox: false }), { text: 'ok' }])
  await h.run('try')
  expect(h.toolResult('b').error?.message).toMatch(/needs a `justification`/)
  expect(h.types()).not.toContain('approval/asked')
})

test('a runaway command is killed with its whole process group at its timeout', async () => {
  const tag = String(4_000_000 + Math.floor(Math.random() * 1_000_000))
  const h = await boot(
    [bash({ command: `sleep ${tag}1 & sleep ${tag}2; echo never`, timeout: 1_500 }), { text: 'ok' }],
    "- id: shell\n  name: '@dsh/bash-unconfined'\n",
  )
  const started = Date.now()
  await h.run('run away')
  expect(Date.now() - started).toBeLessThan(40_000) // the sleeps would run for weeks
  expect(h.toolResult('b').error?.code).toBe('COMMAND_TIMEOUT')
  expect(h.toolText('b')).toContain('[Timed out after 1500 ms: the command and every process it started were killed.]')
  expect(processesWith(`sleep ${tag}`)).toEqual([])
})

test('output over the shell cap keeps its head and tail, and says it was truncated', async () => {
  const h = await boot(
    [bash({ command: 'seq 1 20000' }), { text: 'ok' }],
    '- id: shell\n  config: { outputCapBytes: 2000 }\n',
  )
  await h.run('count')
  const text = h.toolText('b')
  expect(text.startsWith('1\n2\n3\n')).toBe(true)
  expect(text).toMatch(/\n\[… \d+ bytes cut …\]\n/)
  // The shell saved every byte to the spill store's file for the call, and the note names it.
  const path = /saved at (\S+):/.exec(text)![1]!
  expect(text).toContain(
    `19999\n20000\n[Output truncated here; all 108894 bytes of it saved at ${path}: read it with offset and limit, or grep it.]`,
  )
  expect(readFileSync(path, 'utf8')).toBe(Array.from({ length: 20000 }, (_, i) => `${i + 1}\n`).join(''))
  expect(text.length).toBeLessThan(2400)
})

test('workdir runs the command in a directory of the workspace; a missing one is a typed error', async () => {
  const h = await boot([
    bash({ command: 'pwd', workdir: 'sub/dir' }, 'ok'),
    bash({ command: 'pwd', workdir: 'nowhere' }, 'missing'),
    { text: 'ok' },
  ])
  mkdirSync(join(h.workspace, 'sub/dir'), { recursive: true })
  await h.run('where')
  expect(h.toolText('ok')).toBe(join(h.workspace, 'sub/dir'))
  expect(h.toolResult('missing').error).toMatchObject({
    code: 'BAD_WORKDIR',
    message: `workdir "nowhere" (${join(h.workspace, 'nowhere')}) does not exist`,
  })
})

test('without bubblewrap, confined modes refuse the command naming the missing backend, and nothing runs', async () => {
  const bin = tempDir('dsh-path-without-bwrap-')
  symlinkSync('/bin/bash', join(bin, 'bash'))
  const repo = dirname(fileURLToPath(import.meta.url)).replace(/\/packages\/.*$/, '')
  const script = fileURLToPath(new URL('./fixtures/no-bwrap.mjs', import.meta.url))
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--conditions=@dsh/source', '--import', 'tsx', script, 'workspace-write', 'read-only', 'danger-full-access'],
    {
      cwd: repo,
      env: { ...process.env, PATH: bin },
    },
  )
  const [write, read, full] = JSON.parse(stdout)
  for (const refused of [write, read]) {
    expect(refused.result.error).toEqual({
      code: 'SANDBOX_UNAVAILABLE',
      message: `The command was not run: cannot confine a command in ${refused.mode} mode: bubblewrap (bwrap) not found on PATH. Confined commands cannot run here until the sandbox backend works; a command with sandbox: false (approved by the user) runs unconfined.`,
    })
    expect(refused.made).toBe(false)
    expect(refused.probe).toEqual({
      backend: 'bubblewrap',
      available: false,
      reason: 'bubblewrap (bwrap) not found on PATH',
    })
  }
  expect(full.made).toBe(true)
}, 60_000)

// Colours and progress bars: the model reads what the terminal would finally show, never an ESC byte.
const COLOURED = String.raw`printf '\033[1;31mFAIL\033[0m one\n'; for p in 10 50 100; do printf '\r\033[2Kdownload %s%%' $p; done; printf '\n'; ls --color=always`

test('colours and a progress bar reach the model as plain text: no ESC byte in the result or the request, the last redraw kept', async () => {
  const h = await boot([bash({ command: COLOURED }), { text: 'done' }], "- id: shell\n  name: '@dsh/bash-unconfined'\n")
  await h.run('colour')
  const text = h.toolText('b')
  expect(text.split('\n').slice(0, 2)).toEqual(['FAIL one', 'download 100%'])
  expect(text).not.toContain('\x1b')
  expect(text).not.toContain('\r')
  const toolMessages = h.root.scriptedLlm.requests.at(-1)!.messages.filter((message) => message.role === 'tool')
  expect(toolMessages).toHaveLength(1)
  expect(JSON.stringify(toolMessages)).not.toMatch(/\\u001b|\\r/)
})

test('a credential value split by a colour code is still redacted: the logged and requested text has no value', async () => {
  const value = 'ghp_colourSplit0123456789abcdef'
  const saved = process.env.GITHUB_TOKEN
  process.env.GITHUB_TOKEN = value
  onTestFinished(() => {
    if (saved === undefined) delete process.env.GITHUB_TOKEN
    else process.env.GITHUB_TOKEN = saved
  })
  const h = await boot(
    [bash({ command: String.raw`printf 'token=ghp_colour\033[32mSplit0123456789abcdef\033[0m\n'` }), { text: 'done' }],
    "- id: shell\n  name: '@dsh/bash-unconfined'\n",
  )
  await h.run('print it')
  expect(h.toolText('b')).toContain('token=«redacted:GITHUB_TOKEN»')
  const requested = h.root.scriptedLlm.requests.flatMap((request) =>
    request.messages.filter((message) => message.role === 'tool'),
  )
  for (const seen of [JSON.stringify(h.events('tool/result')), JSON.stringify(requested)])
    expect(seen).not.toContain('Split0123456789abcdef')
})
