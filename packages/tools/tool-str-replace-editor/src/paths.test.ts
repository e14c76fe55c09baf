import { existsSync, readFileSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import type { ScriptedResponse } from '@dsh/llm-scripted'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'
import type {} from '@dsh/approval'
import { filesContaining, outsideDir, secretWorld } from '@dsh/test-harness/world'

async function boot(script: ScriptedResponse[], home?: string): Promise<Harness> {
  const h = await bootComposition({ patch: scriptedPatch(), home })
  onTestFinished(() => h.dispose())
  h.root.scriptedLlm.enqueue(...script, { text: 'done' })
  return h
}

const editor = (id: string, args: Record<string, unknown>) => toolCall(id, 'str_replace_editor', args)

test('view of ~/.ssh/id_rsa, $DSH_HOME/.credentials.yaml, a link to them or ~/.ssh itself is refused by rule; the secret reaches no log', async () => {
  const world = secretWorld()
  const h = await boot(
    [
      editor('key', { command: 'view', path: world.sshKey }),
      editor('creds', { command: 'view', path: world.credentials }),
      editor('link', { command: 'view', path: 'key.txt' }),
      editor('dir', { command: 'view', path: join(world.home, '.ssh') }),
    ],
    world.dshHome,
  )
  symlinkSync(world.sshKey, join(h.workspace, 'key.txt'))
  await h.run('look at the keys')
  expect(h.toolResult('key').error).toEqual({
    code: 'FS_READ_DENIED',
    message: `"${world.sshKey}" is a secret path (rule ~/.ssh): file tools never read it and confined commands cannot see it`,
  })
  for (const id of ['creds', 'link', 'dir']) expect(h.toolResult(id).error?.code).toBe('FS_READ_DENIED')
  await (await h.agent()).session.flush()
  expect(JSON.stringify(h.events())).not.toContain(world.secret)
  expect(filesContaining(join(world.dshHome, 'sessions'), world.secret)).toEqual([])
})

test('create and str_replace on .git and .dsh are refused by rule and nothing is created', async () => {
  const h = await boot([
    editor('hook', { command: 'create', path: '.git/hooks/pre-commit', file_text: '#!/bin/sh\n' }),
    editor('dsh', { command: 'create', path: '.dsh/cordis.patch.yml', file_text: '- id: evil\n' }),
    editor('notes', { command: 'create', path: 'CLAUDE.md', file_text: '# notes\n' }),
  ])
  await h.run('plant')
  expect(h.toolResult('hook').error?.code).toBe('FS_PROTECTED')
  expect(h.toolResult('dsh').error).toMatchObject({
    code: 'FS_PROTECTED',
    message: expect.stringContaining('(rule .dsh/)'),
  })
  expect(existsSync(join(h.workspace, '.git'))).toBe(false)
  expect(existsSync(join(h.workspace, '.dsh'))).toBe(false)
  expect(readFileSync(join(h.workspace, 'CLAUDE.md'), 'utf8')).toBe('# notes\n')
})

test('with an answerer, create outside the workspace is asked about and lands for that call only', async () => {
  const outside = outsideDir()
  const h = await boot([
    editor('asked', { command: 'create', path: join(outside, 'notes.md'), file_text: '# approved\n' }),
    editor('refused', { command: 'create', path: join(outside, 'other.md'), file_text: 'x' }),
  ])
  const answers = ['allow_once', 'reject'] as const
  let asked = 0
  h.root.approval.answerer(h.root, async () => answers[asked++]!)
  await h.run('write outside')
  expect(readFileSync(join(outside, 'notes.md'), 'utf8')).toBe('# approved\n')
  expect(h.toolResult('refused').error?.code).toBe('APPROVAL_REJECTED')
  expect(existsSync(join(outside, 'other.md'))).toBe(false)
})
