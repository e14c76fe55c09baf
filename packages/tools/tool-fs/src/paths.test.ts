import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, realpathSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import type {} from '@dsh/approval'
import type { ScriptedResponse } from '@dsh/llm-scripted'
import { bootComposition, scriptedPatch, toolCall as call, type Harness } from '@dsh/test-harness'
import { filesContaining, outsideDir, secretWorld } from '@dsh/test-harness/world'

async function boot(
  script: ScriptedResponse[],
  options: { home?: string; homeFiles?: Record<string, string>; files?: Record<string, string> } = {},
): Promise<Harness> {
  const h = await bootComposition({
    patch: scriptedPatch(),
    home: options.home,
    homeFiles: options.homeFiles,
    workspaceFiles: options.files,
  })
  onTestFinished(() => h.dispose())
  if (script.length) h.root.scriptedLlm.enqueue(...script, { text: 'done' })
  return h
}

function gitRepo(dir: string) {
  execFileSync('git', ['init', '-q', dir])
  return readFileSync(join(dir, '.git/config'), 'utf8')
}

test('read refuses ~/.ssh and $DSH_HOME by rule, through a symlink too, and the secret reaches no result and no log', async () => {
  const world = secretWorld()
  const h = await boot(
    [
      call('key', 'read', { path: world.sshKey }),
      call('creds', 'read', { path: world.credentials }),
      call('link', 'read', { path: 'innocent.txt' }),
      call('tilde', 'read', { path: join(world.home, '.ssh') + '/../.ssh/id_rsa' }),
    ],
    { home: world.dshHome },
  )
  symlinkSync(world.sshKey, join(h.workspace, 'innocent.txt'))
  await h.run('read the secrets')
  expect(h.toolResult('key').error).toEqual({
    code: 'FS_READ_DENIED',
    message: `"${world.sshKey}" is a secret path (rule ~/.ssh): file tools never read it and confined commands cannot see it`,
  })
  expect(h.toolResult('creds').error).toMatchObject({
    code: 'FS_READ_DENIED',
    message: expect.stringContaining('(rule $DSH_HOME)'),
  })
  expect(h.toolResult('link').error).toMatchObject({
    code: 'FS_READ_DENIED',
    message: expect.stringContaining(`(it resolves to "${world.sshKey}") is a secret path (rule ~/.ssh)`),
  })
  expect(h.toolResult('tilde').error?.code).toBe('FS_READ_DENIED')
  await (await h.agent()).session.flush()
  expect(JSON.stringify(h.events())).not.toContain(world.secret)
  expect(filesContaining(join(world.dshHome, 'sessions'), world.secret)).toEqual([])
})

test("a spilled result of this session stays readable inside the secret $DSH_HOME, another session's is not", async () => {
  const world = secretWorld()
  const h = await boot([], { home: world.dshHome })
  const { session } = await h.agent()
  const mine = await h.root.spillStore.write({
    sessionId: session.id,
    callId: 'c0',
    tool: 'bash',
    text: 'long output\n',
  })
  const theirs = await h.root.spillStore.write({
    sessionId: 'other-session',
    callId: 'c1',
    tool: 'bash',
    text: 'not yours\n',
  })
  h.root.scriptedLlm.enqueue(call('mine', 'read', { path: mine.path }), call('theirs', 'read', { path: theirs.path }), {
    text: 'done',
  })
  await h.run('read the spills')
  expect(h.toolText('mine')).toBe('     1\tlong output')
  expect(h.toolResult('theirs').error?.code).toBe('FS_READ_DENIED')
})

test('write and edit of .git/hooks/post-commit and .git/config are refused by rule; git run as the user later runs no hook', async () => {
  const marker = join(outsideDir(), 'pwned')
  const h = await boot([
    call('hook', 'write', { path: '.git/hooks/post-commit', content: `#!/bin/sh\ntouch ${marker}\n` }),
    call('r', 'read', { path: '.git/config' }),
    call('config', 'edit', {
      path: '.git/config',
      old_string: '[core]',
      new_string: `[core]\n\tfsmonitor = touch ${marker}`,
    }),
    call('agents', 'write', { path: 'AGENTS.md', content: '# still writable\n' }),
  ])
  const config = gitRepo(h.workspace)
  await h.run('plant a hook')
  expect(h.toolResult('hook').error).toEqual({
    code: 'FS_PROTECTED',
    message: `Refused to write "${join(h.workspace, '.git/hooks/post-commit')}": it is a protected path (rule .git/), read-only inside the writable roots because something outside the sandbox runs or obeys it. Nothing was changed`,
  })
  expect(h.toolResult('config').error?.code).toBe('FS_PROTECTED')
  expect(existsSync(join(h.workspace, '.git/hooks/post-commit'))).toBe(false)
  expect(readFileSync(join(h.workspace, '.git/config'), 'utf8')).toBe(config)
  expect(readFileSync(join(h.workspace, 'AGENTS.md'), 'utf8')).toBe('# still writable\n')
  // The user's own git, unconfined, afterwards.
  execFileSync('git', ['-C', h.workspace, 'status'], { stdio: 'ignore' })
  execFileSync(
    'git',
    [
      '-C',
      h.workspace,
      '-c',
      'user.name=u',
      '-c',
      'user.email=u@example.org',
      'commit',
      '-q',
      '--allow-empty',
      '-m',
      'x',
    ],
    { stdio: 'ignore' },
  )
  expect(existsSync(marker)).toBe(false)
})

test('with an answerer, a protected path is asked about and written for that call only; the log shows the approval', async () => {
  const h = await boot(
    [
      call('asked', 'write', { path: '.vscode/settings.json', content: '{}\n' }),
      call('again', 'write', { path: '.vscode/tasks.json', content: '{}\n' }),
    ],
    {
      files: { '.vscode/keep': '' },
    },
  )
  const answers = ['allow_once', 'reject'] as const
  const reasons: string[] = []
  h.root.approval.answerer(h.root, async (request) => (reasons.push(request.reason), answers[reasons.length - 1]!))
  await h.run('configure the editor')
  expect(readFileSync(join(h.workspace, '.vscode/settings.json'), 'utf8')).toBe('{}\n')
  expect(reasons[0]).toContain('a protected path (rule .vscode/)')
  expect(h.toolResult('again').error?.code).toBe('APPROVAL_REJECTED')
  expect(existsSync(join(h.workspace, '.vscode/tasks.json'))).toBe(false)
  expect(h.events('approval/decided').map((event) => event.data.answer)).toEqual(['allow_once', 'reject'])
})

test('a write outside the workspace becomes an approval request; allowed, the file exists', async () => {
  const outside = outsideDir()
  const h = await boot([call('allowed', 'write', { path: join(outside, 'notes.txt'), content: 'approved\n' })])
  const reasons: string[] = []
  h.root.approval.answerer(h.root, async (request) => (reasons.push(request.reason), 'allow_once'))
  await h.run('write outside')
  expect(readFileSync(join(outside, 'notes.txt'), 'utf8')).toBe('approved\n')
  expect(reasons).toEqual([
    `it writes "${join(outside, 'notes.txt')}", outside the writable roots (${h.workspace}); approved, this one call may write that file`,
  ])
  expect(h.events('approval/asked').map((event) => event.data.callId)).toEqual(['allowed'])
})

test('a write outside the workspace with nobody to ask is refused as before, and the file is absent', async () => {
  const outside = outsideDir()
  const h = await boot([call('refused', 'write', { path: join(outside, 'notes.txt'), content: 'x' })])
  await h.run('write outside')
  expect(h.toolResult('refused').error?.code).toBe('FS_SANDBOX_DENIED')
  expect(existsSync(join(outside, 'notes.txt'))).toBe(false)
  expect(h.events('approval/asked')).toEqual([])
})

test('a secret path is never written, not even with an answerer that allows everything', async () => {
  const world = secretWorld()
  const h = await boot(
    [call('keys', 'write', { path: join(world.home, '.ssh/authorized_keys'), content: 'ssh-ed25519 AAAA attacker\n' })],
    { home: world.dshHome },
  )
  h.root.approval.answerer(h.root, async () => 'allow_once')
  await h.run('add my key')
  expect(h.toolResult('keys').error).toMatchObject({
    code: 'FS_SANDBOX_DENIED',
    message: expect.stringContaining('it is a secret path (rule ~/.ssh)'),
  })
  expect(h.events('approval/asked')).toEqual([])
  expect(existsSync(join(world.home, '.ssh/authorized_keys'))).toBe(false)
})

test('sandbox.denyRead and sandbox.protect globs from the settings apply to the file tools', async () => {
  const h = await boot(
    [
      call('pem', 'read', { path: 'certs/server.pem' }),
      call('readme', 'read', { path: 'certs/README' }),
      call('seen', 'read', { path: 'deploy/run.sh' }),
      call('deploy', 'write', { path: 'deploy/run.sh', content: 'rm -rf /\n' }),
    ],
    {
      homeFiles: { 'settings.yaml': "sandbox.denyRead: ['certs/*.pem']\nsandbox.protect: ['deploy/']\n" },
      files: { 'certs/server.pem': 'PRIVATE', 'certs/README': 'public', 'deploy/run.sh': 'echo ok\n' },
    },
  )
  await h.run('try the rules')
  expect(h.toolResult('pem').error).toMatchObject({
    code: 'FS_READ_DENIED',
    message: expect.stringContaining('(rule certs/*.pem)'),
  })
  expect(h.toolText('readme')).toBe('     1\tpublic')
  expect(h.toolResult('deploy').error).toMatchObject({
    code: 'FS_PROTECTED',
    message: expect.stringContaining('(rule deploy/)'),
  })
  expect(readFileSync(join(h.workspace, 'deploy/run.sh'), 'utf8')).toBe('echo ok\n')
})

test('allow_session on a write outside keeps write(<dir>/**): the next write there runs unasked and lands, another folder still asks', async () => {
  const outside = outsideDir()
  const elsewhere = outsideDir()
  const h = await boot([
    call('first', 'write', { path: join(outside, 'a.txt'), content: 'a\n' }),
    call('second', 'write', { path: join(outside, 'b.txt'), content: 'b\n' }),
    call('other', 'write', { path: join(elsewhere, 'c.txt'), content: 'c\n' }),
  ])
  const asked: { callId?: string; rule?: string }[] = []
  h.root.approval.answerer(
    h.root,
    async (request) => (
      asked.push({ callId: request.callId, rule: request.rule }),
      request.callId === 'first' ? 'allow_session' : 'reject'
    ),
    { actor: 'user:web-tab' },
  )
  await h.run('write outside twice')
  expect(asked).toEqual([
    { callId: 'first', rule: `write(${realpathSync(outside)}/**)` },
    { callId: 'other', rule: `write(${realpathSync(elsewhere)}/**)` },
  ])
  expect(readFileSync(join(outside, 'b.txt'), 'utf8')).toBe('b\n')
  expect(existsSync(join(elsewhere, 'c.txt'))).toBe(false)
})
