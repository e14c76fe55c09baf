import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import type {} from '@dsh/permission-presets'
import type { ScriptedResponse } from '@dsh/llm-scripted'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'
import { eventually, outsideDir, processesWith } from '@dsh/test-harness/world'

const PERSISTENT = scriptedPatch(
  {},
  `- id: tool-bash
  name: '@dsh/tool-bash-persistent'
`,
)

async function boot(script: ScriptedResponse[], patch = ''): Promise<Harness> {
  const h = await bootComposition({ patch: PERSISTENT + patch })
  onTestFinished(() => h.dispose())
  h.root.scriptedLlm.enqueue(...script)
  return h
}

const bash = (id: string, args: Record<string, unknown>) => toolCall(id, 'bash', args)

test('the persistent shell keeps cd and exported variables across calls', async () => {
  const h = await boot([
    bash('one', { command: 'mkdir -p sub/deeper && cd sub && export GREETING=hello && LOCAL=kept' }),
    bash('two', { command: 'pwd; echo "$GREETING $LOCAL"; bash -c \'echo "child sees $GREETING"\'' }),
    bash('three', { command: 'true', workdir: 'deeper' }),
    bash('four', { command: 'pwd' }),
    { text: 'ok' },
  ])
  await h.run('go')
  expect(h.toolText('two')).toBe(`${join(h.workspace, 'sub')}\nhello kept\nchild sees hello`)
  expect(h.toolText('four')).toBe(join(h.workspace, 'sub/deeper'))
})

test('the shell and what it started end with the agent', async () => {
  const tag = String(5_000_000 + Math.floor(Math.random() * 1_000_000))
  const h = await boot([bash('bg', { command: `sleep ${tag} & echo started` }), { text: 'ok' }])
  await h.run('start a job')
  expect(h.toolText('bg')).toMatch(/started$/)
  expect(await eventually(() => processesWith(`sleep ${tag}`).length > 0, 30_000)).toBe(true) // the job may still be forking
  await (await h.agent()).dispose()
  expect(await eventually(() => processesWith(`sleep ${tag}`).length === 0, 30_000)).toBe(true)
})

test('a command past its deadline is interrupted and the shell lives on with its state', async () => {
  const h = await boot([
    bash('set', { command: 'export KEPT=yes' }),
    bash('slow', { command: 'sleep 100', timeout: 1_500 }),
    bash('after', { command: 'echo "alive $KEPT"' }),
    { text: 'ok' },
  ])
  await h.run('go')
  expect(h.toolResult('slow').error?.code).toBe('COMMAND_TIMEOUT')
  expect(h.toolText('after')).toBe('alive yes')
})

test('when the sandbox mode changes, the next call gets a new shell in the same directory and is told so', async () => {
  const h = await boot([
    bash('cd', { command: 'mkdir -p sub && cd sub && export GONE=1' }),
    { text: 'ok' },
    bash('after', { command: 'pwd; echo "[$GONE]"; echo x > f.txt' }),
    { text: 'ok' },
  ])
  await h.run('cd')
  h.root.permissionPresets.set((await h.agent()).session, 'read-only', 'user:cli-flag')
  await h.run('write')
  const text = h.toolText('after')
  expect(text.split('\n')[0]).toBe(
    `[The sandbox mode is now read-only: a new shell was started in ${join(h.workspace, 'sub')}; variables and functions of the previous one are gone.]`,
  )
  expect(text).toContain(`${join(h.workspace, 'sub')}\n[]\n`)
  expect(text).toMatch(/Read-only file system/)
  expect(existsSync(join(h.workspace, 'sub/f.txt'))).toBe(false)
})

test("an approved unconfined call runs once in the shell's directory", async () => {
  const outside = outsideDir()
  const h = await boot([
    bash('cd', { command: 'mkdir -p sub && cd sub' }),
    bash('free', {
      command: `pwd; echo yes > ${outside}/approved.txt`,
      sandbox: false,
      justification: 'write outside',
    }),
    { text: 'ok' },
  ])
  h.root.approval.answerer(h.root, async () => 'allow_once')
  await h.run('go')
  expect(h.toolText('free').split('\n')[0]).toBe(join(h.workspace, 'sub'))
  expect(readFileSync(join(outside, 'approved.txt'), 'utf8')).toBe('yes\n')
})

test("the shell's PTY colours and a progress bar reach the model as plain text: no ESC byte, the last redraw kept", async () => {
  const command = String.raw`printf '\033[1;31mFAIL\033[0m one\n'; for p in 10 50 100; do printf '\r\033[2Kdownload %s%%' $p; done; printf '\n'; ls --color=always`
  const h = await boot([bash('c', { command }), { text: 'done' }])
  await h.run('colour')
  const text = h.toolText('c')
  expect(text.split('\n').slice(0, 2)).toEqual(['FAIL one', 'download 100%'])
  expect(text).not.toContain('\x1b')
  expect(text).not.toContain('\r')
  const toolMessages = h.root.scriptedLlm.requests.at(-1)!.messages.filter((message) => message.role === 'tool')
  expect(toolMessages).toHaveLength(1)
  expect(JSON.stringify(toolMessages)).not.toMatch(/\\u001b|\\r/)
})

test("the shell's printed output is logged while it runs, raw colours kept for the UI, and none of the shell's markers", async () => {
  const command = String.raw`printf '\033[1;31mFAIL\033[0m one\n'; sleep 0.8; echo two`
  const h = await boot([bash('live', { command }), { text: 'done' }])
  await h.run('print')
  const pieces = h.events('tool/output')
  const result = h.events('tool/result')[0]!
  expect(pieces.length).toBeGreaterThanOrEqual(2)
  expect(pieces[0]!.time).toBeLessThan(result.time - 400) // the first line before the command ended
  expect(pieces.map((piece) => piece.data.text).join('')).toBe('FAIL one\ntwo\n')
  expect(pieces.map((piece) => piece.data.raw ?? piece.data.text).join('')).toBe('\x1b[1;31mFAIL\x1b[0m one\r\ntwo\r\n')
  expect(JSON.stringify(pieces)).not.toMatch(/DSH[0-9a-f]{16}/) // the marker protocol stays inside the shell driver
  expect(h.toolText('live')).toBe('FAIL one\ntwo')
})
