import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import { Context } from '@dsh/cordis'
import type { PathAuthority, PathRule, Sandbox } from '@dsh/sandbox'
import { eventually, outsideDir, processesWith, tempDir } from '@dsh/test-harness/world'
import SandboxLocal from './index.ts'

async function mount(): Promise<Sandbox> {
  const root = new Context()
  const fiber = root.plugin(SandboxLocal, SandboxLocal.Config({}))
  await fiber
  onTestFinished(() => fiber.dispose())
  return root.get('sandbox')!
}

const rule = (pattern: string, directory = false): PathRule => ({
  rule: pattern,
  pattern,
  ...(directory ? { directory } : {}),
})

async function run(script: string, workspace: string, paths: Partial<PathAuthority>) {
  const sandbox = await mount()
  const authority = {
    mode: 'workspace-write' as const,
    writableRoots: [workspace],
    paths: { denyRead: [], readExceptions: [], protect: [], ...paths },
  }
  const { argv } = await sandbox.confine(['bash', '-c', script], { cwd: workspace, authority })
  const result = spawnSync(argv[0]!, argv.slice(1), { cwd: workspace, encoding: 'utf8' })
  return { code: result.status, output: result.stdout + result.stderr }
}

test('a secret folder is an empty read-only folder and a secret file shows nothing; a read exception inside stays readable, not writable', async () => {
  const workspace = tempDir('dsh-ws-')
  const home = outsideDir('dsh-home-')
  mkdirSync(join(home, '.ssh'))
  writeFileSync(join(home, '.ssh/id_rsa'), 'KEY-MATERIAL')
  writeFileSync(join(home, '.netrc'), 'machine x password NETRC-SECRET')
  mkdirSync(join(home, 'dsh/spill/s1'), { recursive: true })
  writeFileSync(join(home, 'dsh/spill/s1/c1.txt'), 'spilled output')
  writeFileSync(join(home, 'dsh/.credentials.yaml'), 'KEY: DSH-SECRET')
  const result = await run(
    `ls -A ${home}/.ssh; cat ${home}/.netrc ${home}/dsh/.credentials.yaml; cat ${home}/dsh/spill/s1/c1.txt; echo; touch ${home}/.ssh/new ${home}/dsh/spill/s1/new; echo done`,
    workspace,
    {
      denyRead: [rule(join(home, '.ssh')), rule(join(home, '.netrc')), rule(join(home, 'dsh'))],
      readExceptions: [join(home, 'dsh/spill/s1')],
    },
  )
  expect(result.output).not.toMatch(/KEY-MATERIAL|NETRC-SECRET|DSH-SECRET|id_rsa/)
  expect(result.output).toContain('spilled output')
  expect(result.output.match(/Read-only file system/g)).toHaveLength(2)
  expect(readdirSync(join(home, '.ssh'))).toEqual(['id_rsa'])
})

test('a protected folder inside the workspace is read-only; a missing one written as a folder cannot be created', async () => {
  const workspace = tempDir('dsh-ws-')
  mkdirSync(join(workspace, '.git/hooks'), { recursive: true })
  writeFileSync(join(workspace, '.git/config'), '[core]\n')
  const result = await run(
    'echo x > .git/hooks/post-commit; echo y >> .git/config; mkdir -p .dsh/sub; echo z > .dsh/file; echo ok > src.txt',
    workspace,
    {
      protect: [rule(join(workspace, '.git'), true), rule(join(workspace, '.dsh'), true)],
    },
  )
  expect(result.output.match(/Read-only file system/g)?.length).toBeGreaterThanOrEqual(3)
  expect(existsSync(join(workspace, '.git/hooks/post-commit'))).toBe(false)
  expect(readFileSync(join(workspace, '.git/config'), 'utf8')).toBe('[core]\n')
  // The mount point bwrap made for the missing `.dsh` is removed once the command has ended.
  expect(existsSync(join(workspace, '.dsh'))).toBe(false)
  expect(readFileSync(join(workspace, 'src.txt'), 'utf8')).toBe('ok\n')
})

test('missing protected names, files or folders, nested or not, cannot be created, and nothing is left behind', async () => {
  const workspace = tempDir('dsh-ws-')
  writeFileSync(join(workspace, 'src.txt'), 'kept\n')
  const names = ['.mcp.json', '.envrc', '.husky', '.cursor/mcp.json', '.config/git/config']
  const result = await run(
    'echo x > .mcp.json; echo x > .envrc; mkdir -p .husky && echo x > .husky/pre-commit; mkdir -p .cursor; echo x > .cursor/mcp.json; mkdir -p .config/git; ls -A; echo ok >> src.txt',
    workspace,
    {
      protect: names.map((name) => rule(join(workspace, name))),
    },
  )
  expect(result.code).toBe(0)
  expect(result.output).toMatch(/Read-only file system|Is a directory/)
  expect(readdirSync(workspace)).toEqual(['src.txt'])
  expect(readFileSync(join(workspace, 'src.txt'), 'utf8')).toBe('kept\nok\n')
})

test('a fence stays while another confined command runs: the first to end removes nothing under the one still running, which tidies for both', async () => {
  const workspace = tempDir('dsh-ws-')
  const sandbox = await mount()
  const authority = {
    mode: 'workspace-write' as const,
    writableRoots: [workspace],
    paths: { denyRead: [], readExceptions: [], protect: [rule(join(workspace, '.husky'))] },
  }
  const long = await sandbox.confine(
    ['bash', '-c', 'sleep 2; mkdir -p .husky/x 2>&1; echo > .husky/pre-commit 2>&1; echo long-done'],
    { cwd: workspace, authority },
  )
  const short = await sandbox.confine(['bash', '-c', 'true'], { cwd: workspace, authority })
  const running = spawn(long.argv[0]!, long.argv.slice(1), { cwd: workspace, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  running.stdout.on('data', (chunk) => (output += chunk))
  running.stderr.on('data', (chunk) => (output += chunk))
  const ended = new Promise((resolve) => running.on('close', resolve))
  await new Promise((resolve) => setTimeout(resolve, 500))
  expect(spawnSync(short.argv[0]!, short.argv.slice(1), { cwd: workspace }).status).toBe(0)
  await ended
  expect(output).toContain('long-done')
  expect(output).toMatch(/Read-only file system/)
  expect(readdirSync(workspace)).toEqual([])
})

test('a glob rule is expanded to what exists: every match is hidden, the rest stays visible', async () => {
  const workspace = tempDir('dsh-ws-')
  mkdirSync(join(workspace, 'certs'))
  writeFileSync(join(workspace, 'certs/a.pem'), 'PEM-A')
  writeFileSync(join(workspace, 'certs/b.pem'), 'PEM-B')
  writeFileSync(join(workspace, 'certs/README'), 'public')
  const result = await run('cat certs/a.pem certs/b.pem certs/README', workspace, {
    denyRead: [rule(join(workspace, 'certs/*.pem'))],
  })
  expect(result.output).toContain('public')
  expect(result.output).not.toMatch(/PEM-A|PEM-B/)
})

test('a command ended by SIGTERM to its process group (the kill ladder) still leaves nothing behind, and ends by that signal', async () => {
  const workspace = tempDir('dsh-ws-')
  const sandbox = await mount()
  const authority = {
    mode: 'workspace-write' as const,
    writableRoots: [workspace],
    paths: {
      denyRead: [],
      readExceptions: [],
      protect: [rule(join(workspace, '.envrc')), rule(join(workspace, '.husky'))],
    },
  }
  const { argv } = await sandbox.confine(['bash', '-c', 'echo started; sleep 60'], { cwd: workspace, authority })
  const child = spawn(argv[0]!, argv.slice(1), { cwd: workspace, detached: true, stdio: ['ignore', 'pipe', 'ignore'] })
  const ended = new Promise<NodeJS.Signals | null>((resolve) => child.on('close', (_code, signal) => resolve(signal)))
  await new Promise((resolve) => child.stdout.once('data', resolve))
  expect(readdirSync(workspace).sort()).toEqual(['.envrc', '.husky']) // the fences, while it runs
  process.kill(-child.pid!, 'SIGTERM')
  expect(await ended).toBe('SIGTERM')
  expect(readdirSync(workspace)).toEqual([])
})

test('a command whose starter is killed with SIGKILL (dsh killed -9) ends with it, and its fences are tidied', async () => {
  const workspace = tempDir('dsh-ws-')
  const sandbox = await mount()
  const authority = {
    mode: 'workspace-write' as const,
    writableRoots: [workspace],
    paths: { denyRead: [], readExceptions: [], protect: [rule(join(workspace, '.envrc'))] },
  }
  const tag = `dsh-orphan-${process.pid}-${Date.now()}`
  const { argv } = await sandbox.confine(['bash', '-c', `echo started; exec -a ${tag} sleep 120`], {
    cwd: workspace,
    authority,
  })
  // The starter stands for dsh: the confined argv is its child, as ctx.subprocess spawns it.
  const starter = spawn('bash', ['-c', '"$@" & wait', 'starter', ...argv], {
    cwd: workspace,
    stdio: ['ignore', 'pipe', 'ignore'],
  })
  onTestFinished(() => void spawnSync('pkill', ['-KILL', '-f', tag]))
  await new Promise((resolve) => starter.stdout.once('data', resolve))
  expect(await eventually(() => processesWith(tag).length > 0, 20_000)).toBe(true)
  starter.kill('SIGKILL')
  expect(await eventually(() => processesWith(tag).length === 0, 20_000), processesWith(tag).join('\n')).toBe(true)
  expect(await eventually(() => readdirSync(workspace).length === 0, 20_000), readdirSync(workspace).join(' ')).toBe(
    true,
  )
})
