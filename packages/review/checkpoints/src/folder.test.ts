// Outside git: commands' changes are found by manifests of the workspace folder around them (manifest.ts), their
// prior contents kept by sha256, previewed and rewound. Real files, the real fs fence; only the model is scripted.
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import type { ScriptedResponse } from '@dsh/llm-scripted'
import { bootComposition, scriptedPatch, toolCall as call, type Harness } from '@dsh/test-harness'
import { filesContaining, outsideDir } from '@dsh/test-harness/world'
import type {} from './index.ts'

const MAX = 1000

async function boot(options: Parameters<typeof bootComposition>[0] = {}): Promise<Harness> {
  const h = await bootComposition({
    ...options,
    patch: scriptedPatch({}, `- id: checkpoints\n  config: { maxFileBytes: ${MAX} }\n`),
  })
  onTestFinished(() => h.dispose())
  return h
}

async function turn(h: Harness, ...calls: ScriptedResponse[]) {
  h.root.scriptedLlm.enqueue(...calls, { text: 'done' })
  await h.run('go')
}

const file = (h: Harness, path: string) => readFileSync(join(h.workspace, path), 'utf8')
const sessionFolder = (h: Harness) =>
  readdirSync(join(h.home, 'sessions'), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isDirectory() && entry.name === 'checkpoints')
    .map((entry) => join(entry.parentPath, entry.name))

test('a command changing and making files outside git is checkpointed, previewed, then rewound; a too-big file is noted', async () => {
  const big = 'x'.repeat(MAX + 1)
  const h = await boot({
    workspaceFiles: { 'a.txt': 'one\n', 'b.txt': 'untouched\n', 'big.log': big, 'node_modules/m.js': 'dep\n' },
  })
  await turn(h, call('b1', 'bash', { command: 'echo first >> b.txt.tmp && rm b.txt.tmp' }))
  expect(h.events('checkpoint/before')).toEqual([]) // a command that leaves the folder as it was logs nothing
  await turn(
    h,
    call('b2', 'bash', {
      command: 'echo changed > a.txt && echo new > c.txt && echo more >> big.log && echo dep2 > node_modules/m.js',
    }),
  )
  expect(h.events('checkpoint/uncovered')).toEqual([])
  const befores = h.events('checkpoint/before').map((event) => event.data)
  expect(befores.map((data) => [data.path, data.via, data.turn]).sort()).toEqual([
    ['a.txt', 'snapshot', 2],
    ['big.log', 'snapshot', 2],
    ['c.txt', 'snapshot', 2],
  ])
  expect(befores.find((data) => data.path === 'big.log')?.state).toEqual({ unrecorded: 'too-large' })
  // Only what changed is in the session's checkpoint store: a.txt before and after, c.txt after.
  const [store] = sessionFolder(h)
  expect(readdirSync(store!).sort()).toHaveLength(3)

  const { session } = await h.agent()
  const preview = await h.root.checkpoints.previewRewind(session, { toTurn: 2, actor: 'user:cli-flag' })
  expect(preview.restored).toEqual([
    { path: 'a.txt', state: { sha256: expect.any(String), bytes: 4 } },
    { path: 'c.txt', state: { absent: true } },
  ])
  expect(preview.skipped).toEqual([{ path: 'big.log', reason: expect.stringContaining('not kept (too-large') }])
  expect(file(h, 'a.txt')).toBe('changed\n') // a preview writes nothing and logs nothing
  expect(h.events('rewind/done')).toEqual([])

  const done = await h.root.checkpoints.rewind(session, { toTurn: 2, actor: 'user:cli-flag' })
  expect(done.restored.map((entry) => entry.path)).toEqual(['a.txt', 'c.txt'])
  expect(file(h, 'a.txt')).toBe('one\n')
  expect(existsSync(join(h.workspace, 'c.txt'))).toBe(false)
  expect(file(h, 'b.txt')).toBe('untouched\n')
  expect(file(h, 'big.log')).toBe(`${big}more\n`)
  expect(file(h, 'node_modules/m.js')).toBe('dep2\n') // a skipped folder is not covered
})

test('attack: links the model plants to outside the workspace are neither read nor followed by the rewind', async () => {
  const secret = `SECRET-${Math.random().toString(36).slice(2)}`
  const outside = outsideDir()
  writeFileSync(join(outside, 'victim'), 'precious\n')
  mkdirSync(join(outside, 'dir'))
  writeFileSync(join(outside, 'dir', 'f.txt'), 'precious too\n')
  writeFileSync(join(outside, 'secret'), `${secret}\n`)
  const h = await boot({
    workspaceFiles: { 'a.txt': 'one\n', 'vault/token.key': `${secret}\n` },
    homeFiles: { 'settings.yaml': "sandbox.denyRead: ['vault']\n" },
  })
  await turn(
    h,
    call('b1', 'bash', { command: 'mkdir sub && echo mine > sub/f.txt && cat vault/token.key s.txt || true' }),
  )
  await turn(
    h,
    call('b2', 'bash', {
      command: [
        `rm a.txt && ln -s ${join(outside, 'victim')} a.txt`,
        `rm -r sub && ln -s ${join(outside, 'dir')} sub`,
        `ln -s ${join(outside, 'secret')} s.txt`,
      ].join(' && '),
    }),
  )
  expect(lstatSync(join(h.workspace, 'sub')).isSymbolicLink()).toBe(true)
  const { session } = await h.agent()
  const done = await h.root.checkpoints.rewind(session, { toTurn: 1, force: true, actor: 'user:cli-flag' })
  expect(readFileSync(join(outside, 'victim'), 'utf8')).toBe('precious\n')
  expect(readFileSync(join(outside, 'dir', 'f.txt'), 'utf8')).toBe('precious too\n')
  expect(lstatSync(join(h.workspace, 'a.txt')).isSymbolicLink()).toBe(true)
  const reasons = Object.fromEntries(done.skipped.map((entry) => [entry.path, entry.reason]))
  expect(reasons['a.txt']).toMatch(/symbolic link/)
  expect(reasons['sub/f.txt']).toMatch(/outside the workspace/)
  expect(done.restored).toEqual([])
  // Neither the secret in the workspace (sandbox.denyRead) nor the one a link points at was read into dsh's
  // home: not into the checkpoint store, not into the snapshot pool.
  expect(filesContaining(join(h.home, 'sessions'), secret)).toEqual([])
  expect(session.events.some((event) => JSON.stringify(event).includes(secret))).toBe(false)
})
