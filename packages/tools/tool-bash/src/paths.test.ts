import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import type {} from '@dsh/approval'
import type { ScriptedResponse } from '@dsh/llm-scripted'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'
import { filesContaining, outsideDir, secretWorld } from '@dsh/test-harness/world'

async function boot(
  script: ScriptedResponse[],
  options: { home?: string; homeFiles?: Record<string, string> } = {},
): Promise<Harness> {
  const h = await bootComposition({ patch: scriptedPatch(), home: options.home, homeFiles: options.homeFiles })
  onTestFinished(() => h.dispose())
  h.root.scriptedLlm.enqueue(...script, { text: 'done' })
  return h
}

const bash = (id: string, command: string, more: Record<string, unknown> = {}) =>
  toolCall(id, 'bash', { command, ...more })
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-C', cwd, '-c', 'user.name=u', '-c', 'user.email=u@example.org', ...args], { encoding: 'utf8' })

test('inside bubblewrap ~/.ssh and $DSH_HOME are empty: cat, head, python and node read nothing, and the secret reaches no log', async () => {
  const world = secretWorld()
  const h = await boot(
    [
      bash('cat', `cat ${world.sshKey}; ls -A ${world.home}/.ssh; cat ${world.credentials}`),
      bash('head', `head -c 200 ${world.credentials} ${world.sshKey}`),
      bash('python', `python3 -c "print(open('${world.sshKey}').read())"`),
      bash('node', `node -e "console.log(require('fs').readFileSync('${world.credentials}', 'utf8'))"`),
      bash('link', 'ln -s "$HOME/.ssh/id_rsa" key && cat key; grep -r SECRET "$HOME" | head -5'),
    ],
    { home: world.dshHome },
  )
  await h.run('exfiltrate')
  for (const id of ['cat', 'head', 'python', 'node', 'link']) expect(h.toolText(id)).not.toContain(world.secret)
  expect(h.toolText('cat')).toMatch(/No such file or directory/)
  await (await h.agent()).session.flush()
  expect(filesContaining(join(world.dshHome, 'sessions'), world.secret)).toEqual([])
  // The files are still there for the user.
  expect(readFileSync(world.sshKey, 'utf8')).toContain(world.secret)
})

test('a symlink in the workspace to ~/.ssh/id_rsa: cat fails inside bubblewrap', async () => {
  const world = secretWorld()
  // One stream for both: stdout and stderr are separate pipes, whose order a loaded machine does not keep.
  const h = await boot([bash('cat', 'cat innocent.txt 2>&1; echo "[exit $?]"')], { home: world.dshHome })
  symlinkSync(world.sshKey, join(h.workspace, 'innocent.txt'))
  await h.run('read the link')
  expect(h.toolText('cat')).not.toContain(world.secret)
  expect(h.toolText('cat')).toMatch(/No such file or directory\n\[exit 1\]/)
})

test(".git, hooks and config are read-only to commands, .dsh cannot be created, AGENTS.md stays writable; the user's git later runs nothing", async () => {
  const marker = join(outsideDir(), 'pwned')
  const h = await boot([
    bash('hook', `printf '#!/bin/sh\\ntouch ${marker}\\n' > .git/hooks/post-commit; chmod +x .git/hooks/post-commit`),
    bash('fsmonitor', `git config core.fsmonitor 'touch ${marker}'`),
    bash('dsh', 'mkdir -p .dsh && echo "- id: evil" > .dsh/cordis.patch.yml'),
    bash('agents', 'echo "# notes" > AGENTS.md && git status --short'),
  ])
  git(h.workspace, 'init', '-q')
  const config = readFileSync(join(h.workspace, '.git/config'), 'utf8')
  await h.run('persist')
  expect(h.toolText('hook')).toMatch(/Read-only file system/)
  expect(h.toolText('hook')).toContain('run it again with writeGit: true and a justification')
  expect(h.toolText('fsmonitor')).toMatch(/could not lock config file|Read-only file system/)
  expect(h.toolText('dsh')).toMatch(/Read-only file system/)
  expect(readFileSync(join(h.workspace, 'AGENTS.md'), 'utf8')).toBe('# notes\n')
  // As the user would, unconfined: status and a commit run no planted code.
  git(h.workspace, 'status')
  git(h.workspace, 'commit', '-q', '--allow-empty', '-m', 'x')
  expect(existsSync(marker)).toBe(false)
  expect(readFileSync(join(h.workspace, '.git/config'), 'utf8')).toBe(config)
  expect(existsSync(join(h.workspace, '.git/hooks/post-commit'))).toBe(false)
  expect(existsSync(join(h.workspace, '.dsh/cordis.patch.yml'))).toBe(false)
})

test('a commit with writeGit runs after approval and lands; without approval it does not run and nothing is committed', async () => {
  const h = await boot([
    bash('plain', 'git add a.txt && git -c user.name=m -c user.email=m@example.org commit -qm plain'),
    bash('approved', 'git add a.txt && git -c user.name=m -c user.email=m@example.org commit -qm approved', {
      writeGit: true,
      justification: 'commit the fix',
    }),
    bash('rejected', 'git -c user.name=m -c user.email=m@example.org commit -q --allow-empty -m rejected', {
      writeGit: true,
      justification: 'another commit',
    }),
  ])
  git(h.workspace, 'init', '-q')
  execFileSync('sh', ['-c', 'echo a > a.txt'], { cwd: h.workspace })
  const answers = ['allow_once', 'reject'] as const
  const asked: string[] = []
  h.root.approval.answerer(
    h.root,
    async (request) => (asked.push(`${request.summary} | ${request.reason}`), answers[asked.length - 1]!),
  )
  await h.run('commit')
  expect(h.toolText('plain')).toMatch(/index\.lock': Read-only file system/)
  expect(h.toolText('plain')).toContain('run it again with writeGit: true and a justification')
  expect(h.toolText('approved')).toBe('(no output)\n[Ran with .git writable, as approved.]')
  expect(asked[0]).toBe(
    'bash: git add a.txt && git -c user.name=m -c user.email=m@example.org commit -qm approved [.git writable] | it asks to run with .git writable (git hooks and config there run unconfined the next time you use git): commit the fix',
  )
  expect(h.toolResult('rejected').error?.code).toBe('APPROVAL_REJECTED')
  expect(git(h.workspace, 'log', '--format=%s').trim().split('\n')).toEqual(['approved'])
})

test('writeGit without a justification is refused before anything runs', async () => {
  const h = await boot([bash('bare', 'git commit --allow-empty -m x', { writeGit: true })])
  await h.run('commit')
  expect(h.toolResult('bare').error?.message).toContain('`writeGit: true` needs a `justification`')
  expect(h.types()).not.toContain('tool/dispatched')
})

test('sandbox.denyRead and sandbox.protect globs from the settings hide and fence paths inside bubblewrap', async () => {
  const h = await boot(
    [bash('pem', 'cat certs/server.pem; echo; cat certs/README'), bash('deploy', 'echo "rm -rf ~" > deploy/run.sh')],
    {
      homeFiles: { 'settings.yaml': "sandbox.denyRead: ['certs/*.pem']\nsandbox.protect: ['deploy/']\n" },
    },
  )
  execFileSync(
    'sh',
    [
      '-c',
      'mkdir certs deploy && echo PRIVATE-PEM > certs/server.pem && echo public > certs/README && echo ok > deploy/run.sh',
    ],
    { cwd: h.workspace },
  )
  await h.run('try the rules')
  expect(h.toolText('pem')).not.toContain('PRIVATE-PEM')
  expect(h.toolText('pem')).toContain('public')
  expect(h.toolText('deploy')).toMatch(/Read-only file system/)
  expect(readFileSync(join(h.workspace, 'deploy/run.sh'), 'utf8')).toBe('ok\n')
})

test('in a git worktree the .git file is protected, and an approved writeGit commit reaches the linked git directory', async () => {
  const base = outsideDir()
  const main = join(base, 'main')
  const tree = join(base, 'tree')
  execFileSync('git', ['init', '-q', main])
  git(main, 'commit', '-q', '--allow-empty', '-m', 'root')
  git(main, 'worktree', 'add', '-q', tree)
  const h = await bootComposition({ patch: scriptedPatch(), workspace: tree })
  onTestFinished(() => h.dispose())
  h.root.scriptedLlm.enqueue(
    bash('redirect', `echo "gitdir: ${base}/evil" > .git`),
    bash('plain', 'git -c user.name=m -c user.email=m@example.org commit -q --allow-empty -m plain'),
    bash('approved', 'git -c user.name=m -c user.email=m@example.org commit -q --allow-empty -m approved', {
      writeGit: true,
      justification: 'commit in the worktree',
    }),
    { text: 'done' },
  )
  h.root.approval.answerer(h.root, async () => 'allow_once')
  await h.run('commit in the worktree')
  expect(h.toolText('redirect')).toMatch(/Read-only file system|Device or resource busy/)
  expect(readFileSync(join(tree, '.git'), 'utf8')).toMatch(/^gitdir: .*worktrees/)
  expect(h.toolText('plain')).toMatch(/Read-only file system/)
  expect(git(tree, 'log', '--format=%s').trim().split('\n')).toEqual(['approved', 'root'])
})

test('a bash(git *) grant does not cover a writeGit call: it asks, offering writegit(git commit *), and an allow_session answer covers the next commit', async () => {
  const h = await bootComposition({
    patch: scriptedPatch(),
    homeFiles: { 'settings.yaml': 'permissions.allow: ["bash(git *)"]\n' },
  })
  onTestFinished(() => h.dispose())
  git(h.workspace, 'init', '-q')
  git(h.workspace, 'config', 'user.name', 'm')
  git(h.workspace, 'config', 'user.email', 'm@example.org')
  const commit = (id: string, message: string) =>
    bash(id, `git commit -q --allow-empty -m ${message}`, { writeGit: true, justification: 'commit' })
  h.root.scriptedLlm.enqueue(
    bash('status', 'git status --short'),
    commit('first', 'first'),
    commit('second', 'second'),
    { text: 'done' },
  )
  const asked: { callId?: string; rule?: string }[] = []
  h.root.approval.answerer(
    h.root,
    async (request) => (asked.push({ callId: request.callId, rule: request.rule }), 'allow_session'),
    { actor: 'user:web-tab' },
  )
  await h.run('commit twice')
  expect(asked).toEqual([{ callId: 'first', rule: 'writegit(git commit *)' }])
  expect(git(h.workspace, 'log', '--format=%s')).toBe('second\nfirst\n')
})
