// Checkpoints and rewind on a real composition: real files, the real fs fence, real git; only the model is scripted.
import { execFileSync } from 'node:child_process'
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { inflateSync } from 'node:zlib'
import { expect, onTestFinished, test } from 'vitest'
import type { ScriptedResponse } from '@dsh/llm-scripted'
import { bootComposition, scriptedPatch, toolCall as call, type Harness } from '@dsh/test-harness'
import { filesContaining, outsideDir } from '@dsh/test-harness/world'
import type {} from './index.ts'

async function boot(options: Parameters<typeof bootComposition>[0] = {}): Promise<Harness> {
  const h = await bootComposition({ ...options, patch: scriptedPatch() })
  onTestFinished(() => h.dispose())
  return h
}

/** One turn: these calls, then a closing answer. */
async function turn(h: Harness, ...calls: ScriptedResponse[]) {
  h.root.scriptedLlm.enqueue(...calls, { text: 'done' })
  await h.run('go')
}

const file = (h: Harness, path: string) => readFileSync(join(h.workspace, path), 'utf8')

/** Three turns: a.txt edited in turns 1 and 2, c.txt created in turn 2, sub/d.txt created in turn 3. */
async function threeTurns(h: Harness) {
  await turn(
    h,
    call('r', 'read', { path: 'a.txt' }),
    call('e1', 'edit', { path: 'a.txt', old_string: 'one', new_string: 'uno' }),
  )
  await turn(
    h,
    call('e2', 'edit', { path: 'a.txt', old_string: 'uno', new_string: 'eins' }),
    call('w', 'write', { path: 'c.txt', content: 'new file\n' }),
  )
  await turn(h, call('w2', 'write', { path: 'sub/d.txt', content: 'deep\n' }))
  expect(file(h, 'a.txt')).toBe('eins\n')
}

test('rewinding to before turn 2 restores every touched file byte for byte and logs what it did', async () => {
  const h = await boot({ workspaceFiles: { 'a.txt': 'one\n', 'b.txt': 'untouched\n' } })
  await threeTurns(h)
  const { session } = await h.agent()
  const done = await h.root.checkpoints.rewind(session, { toTurn: 2, actor: 'user:cli-flag' })
  expect(file(h, 'a.txt')).toBe('uno\n')
  expect(existsSync(join(h.workspace, 'c.txt'))).toBe(false)
  expect(existsSync(join(h.workspace, 'sub/d.txt'))).toBe(false)
  expect(file(h, 'b.txt')).toBe('untouched\n')
  expect(done.restored.map((entry) => entry.path).sort()).toEqual(['a.txt', 'c.txt', 'sub/d.txt'])
  expect(done.conflicts).toEqual([])
  expect(h.events('rewind/done').at(-1)?.data).toEqual(done)
  // Before turn 1: the workspace as the session found it.
  await h.root.checkpoints.rewind(session, { toTurn: 1, actor: 'user:cli-flag' })
  expect(file(h, 'a.txt')).toBe('one\n')
})

test('a file changed outside dsh since the session wrote it is reported, not overwritten, unless forced', async () => {
  const h = await boot({ workspaceFiles: { 'a.txt': 'one\n' } })
  await threeTurns(h)
  writeFileSync(join(h.workspace, 'a.txt'), 'the user typed this\n')
  const { session } = await h.agent()
  const done = await h.root.checkpoints.rewind(session, { toTurn: 2, actor: 'user:cli-flag' })
  expect(file(h, 'a.txt')).toBe('the user typed this\n')
  expect(done.conflicts).toEqual([
    { path: 'a.txt', reason: expect.stringContaining('changed since the session last wrote it') },
  ])
  expect(existsSync(join(h.workspace, 'c.txt'))).toBe(false) // the others are restored all the same
  const forced = await h.root.checkpoints.rewind(session, { toTurn: 2, force: true, actor: 'user:cli-flag' })
  expect(file(h, 'a.txt')).toBe('uno\n')
  expect(forced.restored.map((entry) => entry.path)).toEqual(['a.txt'])
})

test('--fork forks the conversation at the start of the turn', async () => {
  const h = await boot({ workspaceFiles: { 'a.txt': 'one\n' } })
  await threeTurns(h)
  const { session } = await h.agent()
  const done = await h.root.checkpoints.rewind(session, { toTurn: 2, fork: true, actor: 'user:cli-flag' })
  const fork = await h.root.sessions.read(done.forkedTo!)
  expect(fork.header.parent?.id).toBe(session.id)
  expect(fork.events.filter((event) => event.type === 'turn/start')).toHaveLength(1)
})

test('a log cannot name a path outside the workspace: absolute and .. paths are refused on append', async () => {
  const h = await boot()
  const { session } = await h.agent()
  const state = { absent: true } as const
  expect(() =>
    session.append('checkpoint/before', { callId: 'x', turn: 1, path: '/etc/passwd', state, via: 'tool' }),
  ).toThrow(/path must be relative to the workspace/)
  expect(() =>
    session.append('checkpoint/before', { callId: 'x', turn: 1, path: '../../etc/passwd', state, via: 'tool' }),
  ).toThrow(/\.\. segments/)
  expect(() =>
    session.append('rewind/done', {
      toTurn: 1,
      forced: false,
      restored: [{ path: '/etc/passwd', state }],
      conflicts: [],
      skipped: [],
      actor: 'x',
    }),
  ).toThrow(/relative/)
})

test('checkpoint events not of their schema are refused, naming the field: a file state is told by the fields it carries', async () => {
  const h = await boot()
  const { session } = await h.agent()
  const before = { callId: 'x', turn: 1, path: 'a.txt', via: 'tool' as const }
  expect(() => session.append('checkpoint/before', { ...before, state: { sha256: 'not-hex', bytes: 1 } })).toThrow(
    'data.state.sha256 must be a sha256 hex digest',
  )
  expect(() => session.append('checkpoint/before', { ...before, state: { unrecorded: 'lost' as never } })).toThrow(
    'data.state.unrecorded must be one of secret, too-large, not-a-file, unreadable',
  )
  expect(() => session.append('checkpoint/before', { ...before, state: {} as never })).toThrow(
    'data.state must be an object with sha256, bytes or an object with absent or an object with unrecorded',
  )
  expect(() => session.append('checkpoint/before', { ...before, turn: 0, state: { absent: true } })).toThrow(
    'data.turn must be a whole number ≥ 1',
  )
  expect(() =>
    session.append('rewind/done', {
      toTurn: 1,
      forced: false,
      restored: [],
      conflicts: [{ path: 'a' } as never],
      skipped: [],
      actor: 'x',
    }),
  ).toThrow('data.conflicts[0].reason must be a string')
  expect(
    session.events.filter((event) => event.type.startsWith('checkpoint/') || event.type === 'rewind/done'),
  ).toEqual([])
})

test('a file swapped for a symlink out of the workspace since is not followed: the target stays as it was', async () => {
  const h = await boot({ workspaceFiles: { 'a.txt': 'one\n' } })
  await threeTurns(h)
  const outside = outsideDir()
  writeFileSync(join(outside, 'victim'), 'precious\n')
  rmSync(join(h.workspace, 'a.txt'))
  symlinkSync(join(outside, 'victim'), join(h.workspace, 'a.txt'))
  // A folder on the way swapped for a link out: sub/d.txt would be removed there.
  mkdirSync(join(outside, 'sub'))
  writeFileSync(join(outside, 'sub', 'd.txt'), 'deep\n')
  rmSync(join(h.workspace, 'sub'), { recursive: true })
  symlinkSync(join(outside, 'sub'), join(h.workspace, 'sub'))
  const { session } = await h.agent()
  const done = await h.root.checkpoints.rewind(session, { toTurn: 2, force: true, actor: 'user:cli-flag' })
  expect(readFileSync(join(outside, 'victim'), 'utf8')).toBe('precious\n')
  expect(readFileSync(join(outside, 'sub', 'd.txt'), 'utf8')).toBe('deep\n')
  expect(lstatSync(join(h.workspace, 'a.txt')).isSymbolicLink()).toBe(true)
  expect(done.skipped.map((entry) => entry.path).sort()).toEqual(['a.txt', 'sub/d.txt'])
  expect(done.skipped.find((entry) => entry.path === 'a.txt')?.reason).toMatch(/symbolic link/)
  expect(done.skipped.find((entry) => entry.path === 'sub/d.txt')?.reason).toMatch(/outside the workspace/)
})

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@e', ...args], { cwd, encoding: 'utf8' })

function gitRepo(h: Harness) {
  git(h.workspace, 'init', '-q')
  git(h.workspace, 'add', '-A')
  git(h.workspace, 'commit', '-qm', 'start')
}

/** Every loose object's inflated bytes (what `git cat-file` would give a command that lists .git/objects). */
function looseObjects(repo: string): Buffer[] {
  const dir = join(repo, '.git', 'objects')
  return readdirSync(dir)
    .filter((name) => /^[0-9a-f]{2}$/.test(name))
    .flatMap((name) => readdirSync(join(dir, name)).map((object) => inflateSync(readFileSync(join(dir, name, object)))))
}

test('in a git workspace, files a command changes are checkpointed and rewound; the user index, stash and refs are untouched', async () => {
  const h = await boot({ workspaceFiles: { 'a.txt': 'one\n', 'tracked.txt': 'keep\n' } })
  gitRepo(h)
  writeFileSync(join(h.workspace, 'staged.txt'), 'staged\n')
  git(h.workspace, 'add', 'staged.txt')
  const index = readFileSync(join(h.workspace, '.git', 'index'))
  const refs = git(h.workspace, 'for-each-ref')
  await turn(h, call('b1', 'bash', { command: 'echo changed > a.txt && echo made > made.txt' }))
  await turn(h, call('b2', 'bash', { command: 'rm tracked.txt && echo again >> a.txt' }))
  expect(readFileSync(join(h.workspace, '.git', 'index')).equals(index)).toBe(true)
  expect(git(h.workspace, 'for-each-ref')).toBe(refs)
  expect(git(h.workspace, 'stash', 'list')).toBe('')
  const { session } = await h.agent()
  await h.root.checkpoints.rewind(session, { toTurn: 2, actor: 'user:cli-flag' })
  expect(file(h, 'a.txt')).toBe('changed\n')
  expect(file(h, 'tracked.txt')).toBe('keep\n')
  expect(file(h, 'made.txt')).toBe('made\n')
  await h.root.checkpoints.rewind(session, { toTurn: 1, actor: 'user:cli-flag' })
  expect(file(h, 'a.txt')).toBe('one\n')
  expect(existsSync(join(h.workspace, 'made.txt'))).toBe(false)
  expect(git(h.workspace, 'status', '--porcelain')).toBe('A  staged.txt\n')
})

test('outside git with folder snapshots off, a command is noted as not covered and rewind leaves its changes', async () => {
  const h = await bootComposition({
    workspaceFiles: { 'a.txt': 'one\n' },
    patch: scriptedPatch({}, '- id: checkpoints\n  config: { folderSnapshots: false }\n'),
  })
  onTestFinished(() => h.dispose())
  await turn(h, call('b', 'bash', { command: 'echo changed > a.txt' }))
  expect(h.events('checkpoint/uncovered').map((event) => event.data.reason)).toEqual([
    'the workspace is not a git repository and folder snapshots are off: files changed by commands are not listed or rewound',
  ])
  const { session } = await h.agent()
  const done = await h.root.checkpoints.rewind(session, { toTurn: 1, actor: 'user:cli-flag' })
  expect(done.restored).toEqual([])
  expect(file(h, 'a.txt')).toBe('changed\n')
})

test('a secret path (sandbox.denyRead) is never stored: not in the checkpoint store, not hashed into the repository', async () => {
  const secret = `SECRET-${Math.random().toString(36).slice(2)}`
  const h = await boot({
    workspaceFiles: { 'a.txt': 'one\n', 'vault/token.key': `${secret}\n` },
    homeFiles: { 'settings.yaml': "sandbox.denyRead: ['vault']\n" },
  })
  git(h.workspace, 'init', '-q')
  // Unconfined, a command can change the secret file: the snapshot must still not hash it.
  h.root.scriptedLlm.enqueue(call('b', 'bash', { command: 'echo x > a.txt' }), { text: 'done' })
  await h.run('go')
  const { session } = await h.agent()
  await turn(
    h,
    call('s', 'str_replace_editor', { command: 'create', path: 'vault/token.key', file_text: 'overwritten' }),
  )
  expect(h.toolResult('s').error).toBeDefined()
  expect(looseObjects(h.workspace).some((object) => object.includes(secret))).toBe(false)
  expect(filesContaining(join(h.home, 'sessions'), secret)).toEqual([])
  expect(h.events('checkpoint/after').map((event) => event.data.path)).toEqual(['a.txt'])
  expect(session.events.some((event) => JSON.stringify(event).includes(secret))).toBe(false)
})

test('/rewind N is a slash command: it restores and says what it left', async () => {
  const h = await boot({ workspaceFiles: { 'a.txt': 'one\n' } })
  await threeTurns(h)
  const agent = await h.agent()
  expect(await h.root.commands.run(agent, '/rewind 1 --preview')).toEqual({
    handled: true,
    name: 'rewind',
    output:
      'Would restore 3 files to before turn 1 (nothing written yet):\n  restore a.txt\n  remove c.txt\n  remove sub/d.txt',
  })
  expect(file(h, 'a.txt')).toBe('eins\n')
  expect(await h.root.commands.run(agent, '/rewind 1')).toEqual({
    handled: true,
    name: 'rewind',
    output: 'Restored 3 files to before turn 1.',
  })
  expect(file(h, 'a.txt')).toBe('one\n')
  expect(h.events('rewind/done').at(-1)?.data.actor).toBe('user:slash-command')
  expect(await h.root.commands.run(agent, '/rewind two')).toMatchObject({ handled: true, error: { code: 'BAD_ARGS' } })
  expect(await h.root.commands.run(agent, '/rewind 9')).toMatchObject({
    handled: true,
    error: { code: 'REWIND_OUT_OF_RANGE' },
  })
})
