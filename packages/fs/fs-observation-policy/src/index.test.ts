import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import type { ScriptedResponse } from '@dsh/llm-scripted'
import { bootComposition, scriptedPatch, toolCall as call, type Harness } from '@dsh/test-harness'
import { tempDir } from '@dsh/test-harness/world'

async function boot(script: ScriptedResponse[], options: Parameters<typeof bootComposition>[0] = {}): Promise<Harness> {
  const h = await bootComposition({ ...options, patch: scriptedPatch() })
  onTestFinished(() => h.dispose())
  h.root.scriptedLlm.enqueue(...script, { text: 'done' })
  return h
}

const EDIT = { path: 'src/a.ts', old_string: 'one', new_string: 'uno' }

test('an edit of a file not read in this session is refused before any effect, telling the model to read it first', async () => {
  const h = await boot(
    [
      call('e', 'edit', EDIT),
      call('s', 'str_replace_editor', { command: 'str_replace', path: 'src/a.ts', old_str: 'one', new_str: 'uno' }),
    ],
    {
      workspaceFiles: { 'src/a.ts': 'const one = 1\n' },
    },
  )
  await h.run('edit')
  expect(h.toolResult('e').error).toEqual({
    code: 'DENIED',
    message:
      'The call was denied: "src/a.ts" has not been read in this session. Read it first (read or str_replace_editor view), then retry.',
  })
  expect(h.toolResult('s').error?.code).toBe('DENIED')
  expect(h.events('tool/dispatched')).toEqual([])
  expect(readFileSync(join(h.workspace, 'src/a.ts'), 'utf8')).toBe('const one = 1\n')
})

test('an edit of a file that changed on disk since it was read is refused until it is read again', async () => {
  const h = await boot(
    [
      call('r', 'read', { path: 'src/a.ts' }),
      call('b', 'bash', { command: 'echo "// formatted" >> src/a.ts' }),
      call('stale', 'edit', EDIT),
      call('again', 'str_replace_editor', { command: 'view', path: 'src/a.ts' }),
      call('fresh', 'edit', EDIT),
    ],
    { workspaceFiles: { 'src/a.ts': 'const one = 1\n' } },
  )
  await h.run('edit')
  expect(h.toolResult('stale').error?.message).toMatch(
    /^The call was denied: "src\/a.ts" changed on disk since you last read it \(.+\)\. Read it again \(read or str_replace_editor view\), then retry\.$/,
  )
  expect(h.toolResult('fresh').error).toBeUndefined()
  expect(readFileSync(join(h.workspace, 'src/a.ts'), 'utf8')).toBe('const uno = 1\n// formatted\n')
})

test('what the agent wrote counts as seen: a new file, then edit after edit, need no read', async () => {
  const h = await boot([
    call('w', 'write', { path: 'src/a.ts', content: 'one two\n' }),
    call('e1', 'edit', { path: 'src/a.ts', old_string: 'one', new_string: 'uno' }),
    call('e2', 'edit', { path: 'src/a.ts', old_string: 'two', new_string: 'dos' }),
  ])
  await h.run('write and edit')
  expect(['w', 'e1', 'e2'].map((id) => h.toolResult(id).error)).toEqual([undefined, undefined, undefined])
  expect(readFileSync(join(h.workspace, 'src/a.ts'), 'utf8')).toBe('uno dos\n')
  expect(h.events('fs/observed').map((event) => event.data.callId)).toEqual(['w', 'e1', 'e2'])
})

test('what was read survives resume in a new composition; what was not read stays refused', async () => {
  const home = tempDir('dsh-home-')
  const workspace = tempDir('dsh-ws-')
  const first = await boot([call('r', 'read', { path: 'src/a.ts' })], {
    home,
    workspace,
    workspaceFiles: { 'src/a.ts': 'const one = 1\n', 'src/b.ts': 'const one = 2\n' },
  })
  await first.run('read a')
  const id = (await first.agent()).session.id
  await first.dispose()

  const second = await boot([call('a', 'edit', EDIT), call('b', 'edit', { ...EDIT, path: 'src/b.ts' })], {
    home,
    workspace,
  })
  const agent = await second.root.agents.resume(id)
  agent.followup('edit both')
  await agent.whenIdle()
  const results = Object.fromEntries(agent.session.all('tool/result').map((event) => [event.data.callId, event.data]))
  expect(results.a!.error).toBeUndefined()
  expect(results.b!.error?.message).toMatch(/"src\/b.ts" has not been read in this session/)
  expect(readFileSync(join(workspace, 'src/a.ts'), 'utf8')).toBe('const uno = 1\n')
  expect(readFileSync(join(workspace, 'src/b.ts'), 'utf8')).toBe('const one = 2\n')
})
