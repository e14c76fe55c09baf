// The review of a real session: the files it changed and their diffs, from the log and the checkpoint store.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import type { ScriptedResponse } from '@dsh/llm-scripted'
import { bootComposition, scriptedPatch, toolCall as call, type Harness } from '@dsh/test-harness'
import type {} from '@dsh/checkpoints'
import type {} from './index.ts'

async function boot(options: Parameters<typeof bootComposition>[0] = {}): Promise<Harness> {
  const h = await bootComposition({ ...options, patch: scriptedPatch() })
  onTestFinished(() => h.dispose())
  return h
}

async function turn(h: Harness, ...calls: ScriptedResponse[]) {
  h.root.scriptedLlm.enqueue(...calls, { text: 'done' })
  await h.run('go')
}

test('lists each changed file with a unified diff against the state before the session or before a turn', async () => {
  const h = await boot({ workspaceFiles: { 'a.txt': 'one\ntwo\nthree\n', 'gone.txt': 'bye\n' } })
  await turn(
    h,
    call('r', 'read', { path: 'a.txt' }),
    call('e1', 'edit', { path: 'a.txt', old_string: 'two', new_string: 'TWO' }),
  )
  await turn(
    h,
    call('w', 'write', { path: 'new.txt', content: 'fresh\n' }),
    call('e2', 'edit', { path: 'a.txt', old_string: 'three', new_string: 'THREE' }),
  )
  const { session } = await h.agent()
  const all = await h.root.sessionChanges.changes(session.id)
  expect(all.files.map((file) => [file.path, file.status, file.added, file.removed])).toEqual([
    ['a.txt', 'modified', 2, 2],
    ['new.txt', 'added', 1, 0],
  ])
  expect(all.files[0]!.patch).toBe(
    '===================================================================\n--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n-three\n+TWO\n+THREE\n',
  )
  expect(all.files[0]).toMatchObject({ beforeText: 'one\ntwo\nthree\n', afterText: 'one\nTWO\nTHREE\n' })
  const fromTurn2 = await h.root.sessionChanges.changes(session.id, { fromTurn: 2 })
  expect(fromTurn2.files[0]!.patch).toContain('@@ -1,3 +1,3 @@\n one\n TWO\n-three\n+THREE\n')
  await expect(h.root.sessionChanges.changes(session.id, { fromTurn: 3 })).rejects.toThrow(
    'session ' + session.id + ' has turns 1..2; there is no turn 3 to compare from',
  )
})

test('a stored session is reviewed without being opened, and a file rewound to its start is no longer listed', async () => {
  const h = await boot({ workspaceFiles: { 'a.txt': 'one\n' } })
  await turn(
    h,
    call('r', 'read', { path: 'a.txt' }),
    call('e', 'edit', { path: 'a.txt', old_string: 'one', new_string: 'uno' }),
  )
  const { session } = await h.agent()
  await h.root.checkpoints.rewind(session, { toTurn: 1, actor: 'user:cli-flag' })
  expect((await h.root.sessionChanges.changes(session.id)).files).toEqual([])
})

test('a binary file is listed without a diff, and outside git the changes of a command are listed too', async () => {
  const h = await boot()
  await turn(
    h,
    call('w', 'write', { path: 'x.bin', content: 'a\u0000b' }),
    call('b', 'bash', { command: 'echo made > made.txt' }),
  )
  writeFileSync(join(h.workspace, 'unrelated'), 'x')
  const { session } = await h.agent()
  const changes = await h.root.sessionChanges.changes(session.id)
  expect(changes.files).toEqual([
    expect.objectContaining({ path: 'x.bin', status: 'added', note: 'binary' }),
    expect.objectContaining({ path: 'made.txt', status: 'added', added: 1 }),
  ])
  expect(changes.files[0]!.patch).toBeUndefined()
  expect(changes.notes).toEqual([])
})
