import { mkdirSync, realpathSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, expect, onTestFinished, test } from 'vitest'
import { coveringRule } from '@dsh/sandbox-rules'
import { bootComposition } from '@dsh/test-harness'
import { tempDir } from '@dsh/test-harness/world'
import { resolveRules } from './index.ts'

const realHome = process.env.HOME
afterEach(() => {
  process.env.HOME = realHome
})

async function boot(options: Parameters<typeof bootComposition>[0] = {}) {
  const h = await bootComposition(options)
  onTestFinished(() => h.dispose())
  return h
}

test('the authority carries the secret and protected paths, resolved for this home, workspace and session', async () => {
  const home = tempDir('dsh-fake-home-')
  process.env.HOME = home
  const h = await boot()
  const { session } = await h.agent()
  const { paths } = await h.root.sandboxPolicy.authority(session)
  expect(coveringRule(paths!.denyRead, join(home, '.ssh/id_rsa'))?.rule).toBe('~/.ssh')
  expect(coveringRule(paths!.denyRead, join(h.home, '.credentials.yaml'))?.rule).toBe('$DSH_HOME')
  expect(coveringRule(paths!.denyRead, join(home, 'project/main.ts'))).toBeUndefined()
  expect(coveringRule(paths!.protect, join(h.workspace, '.git/hooks/post-commit'))?.rule).toBe('.git/')
  expect(coveringRule(paths!.protect, join(h.workspace, '.dsh'))?.rule).toBe('.dsh/')
  expect(coveringRule(paths!.protect, join(h.workspace, 'AGENTS.md'))).toBeUndefined()
  expect(coveringRule(paths!.protect, join(h.workspace, 'src/.git-notes.md'))).toBeUndefined()
  // The session's own spill folder stays readable inside the secret $DSH_HOME.
  expect(paths!.readExceptions).toEqual([join(h.home, 'spill', session.id)])
})

test('the sandbox.denyRead and sandbox.protect settings add rules (globs per segment)', async () => {
  const home = tempDir('dsh-fake-home-')
  process.env.HOME = home
  const h = await boot({
    homeFiles: {
      'settings.yaml': "sandbox.denyRead: ['~/vault/*.key', '/srv/tokens']\nsandbox.protect: ['deploy/**']\n",
    },
  })
  const { session } = await h.agent()
  const { paths } = await h.root.sandboxPolicy.authority(session)
  expect(coveringRule(paths!.denyRead, join(home, 'vault/prod.key'))?.rule).toBe('~/vault/*.key')
  expect(coveringRule(paths!.denyRead, join(home, 'vault/README'))).toBeUndefined()
  expect(coveringRule(paths!.denyRead, '/srv/tokens/a/b')?.rule).toBe('/srv/tokens')
  expect(coveringRule(paths!.protect, join(h.workspace, 'deploy/run.sh'))?.rule).toBe('deploy/**')
  expect(h.root.settings.list().map((entry) => entry.key)).toEqual(
    expect.arrayContaining(['sandbox.denyRead', 'sandbox.protect']),
  )
})

test('a rule that cannot be applied fails the boot, naming it and where it was written', async () => {
  await expect(boot({ homeFiles: { 'settings.yaml': "sandbox.denyRead: ['**/.env']\n" } })).rejects.toThrow()
  const bases = { home: '/home/u', dshHome: '/home/u/.dsh', roots: ['/ws'] }
  expect(() => resolveRules(['**/.env'], bases, 'the setting sandbox.denyRead')).toThrow(
    'the setting sandbox.denyRead: the path rule "**/.env" cannot be applied: "**" may only end a rule',
  )
  expect(() => resolveRules(['../up'], bases, 'x')).toThrow(/"\.\." segments/)
  expect(() => resolveRules(['/'], bases, 'x')).toThrow(/whole file system/)
})

test('a rule names both the path as written and its real path, so a linked secret folder is covered either way', () => {
  const base = tempDir()
  mkdirSync(join(base, 'real-ssh'))
  symlinkSync(join(base, 'real-ssh'), join(base, '.ssh'))
  const rules = resolveRules(['~/.ssh'], { home: base, dshHome: '/nowhere', roots: [] }, 'x')
  expect(rules.map((rule) => rule.pattern)).toEqual([join(base, '.ssh'), realpathSync(join(base, 'real-ssh'))])
  expect(coveringRule(rules, join(base, 'real-ssh/id_rsa'))?.rule).toBe('~/.ssh')
})

test('a secret rule that covers the workspace is left out (the user works there); the spill exception is also its real path', async () => {
  const base = tempDir()
  mkdirSync(join(base, 'real-home'))
  symlinkSync(join(base, 'real-home'), join(base, 'home-link'))
  mkdirSync(join(base, 'vault', 'work'), { recursive: true })
  const h = await boot({
    home: join(base, 'home-link'),
    workspace: join(base, 'vault', 'work'),
    homeFiles: { 'settings.yaml': `sandbox.denyRead: ['${join(base, 'vault')}']\n` },
  })
  const { session } = await h.agent()
  const { paths } = await h.root.sandboxPolicy.authority(session)
  expect(paths!.denyRead.filter((rule) => rule.pattern.startsWith(join(base, 'vault')))).toEqual([])
  expect(coveringRule(paths!.denyRead, join(base, 'vault', 'work', 'main.ts'))).toBeUndefined()
  expect(coveringRule(paths!.denyRead, join(base, 'real-home', 'grants.yaml'))?.rule).toBe('$DSH_HOME')
  expect(paths!.readExceptions).toEqual([
    join(base, 'home-link', 'spill', session.id),
    join(realpathSync(base), 'real-home', 'spill', session.id),
  ])
})

test("dsh's home is a secret path whatever the row's list says, and no session may work in it or inside it, by either of its paths", async () => {
  const base = tempDir()
  mkdirSync(join(base, 'real-home', 'skills'), { recursive: true })
  symlinkSync(join(base, 'real-home'), join(base, 'home-link'))
  const h = await boot({ home: join(base, 'home-link'), patch: '- id: sandbox-policy\n  config: { denyRead: [] }\n' })
  const session = await h.root.sessions.create({ cwd: h.workspace })
  expect(
    coveringRule(
      (await h.root.sandboxPolicy.authority(session)).paths!.denyRead,
      join(base, 'real-home', 'settings.yaml'),
    )?.rule,
  ).toBe('$DSH_HOME')
  for (const cwd of [join(base, 'home-link'), join(base, 'real-home'), join(base, 'home-link', 'skills')]) {
    await expect(h.root.sessions.create({ cwd })).rejects.toMatchObject({
      code: 'WORKSPACE_REFUSED',
      message: expect.stringMatching(
        /is dsh's home \(\$DSH_HOME.*or inside it.*dsh web.*edit the files in \$DSH_HOME yourself, outside a session/,
      ),
    })
  }
  await expect(h.root.sessions.create({ cwd: join(base, 'real-home-sibling') })).resolves.toBeDefined()
})

test('the memoized rules are never stale: a setting, a mode change, a plugin protecting a folder and a link the model makes in the workspace count from the next call', async () => {
  const h = await boot()
  const { session } = await h.agent()
  const policy = h.root.sandboxPolicy
  const fresh = async () => {
    const { paths, ...rest } = await policy.authority(session)
    // Every call agrees with a derivation from scratch (no memo): the memo can only ever save work.
    const scratch = policy.pathRules(
      rest.writableRoots.length ? rest.writableRoots : await policy.writableRoots(session),
    )
    expect({ denyRead: paths!.denyRead, protect: paths!.protect }).toEqual({
      denyRead: scratch.denyRead,
      protect: scratch.protect,
    })
    return { paths: paths!, ...rest }
  }
  const first = await fresh()
  expect(coveringRule(first.paths.protect, join(h.workspace, 'deploy/run.sh'))).toBeUndefined()
  // Callers may add to what they get (authority() adds the spill folder) without touching the next caller's.
  first.paths.readExceptions.push('/everything')
  expect((await fresh()).paths.readExceptions).not.toContain('/everything')

  await h.root.settings.set('sandbox.protect', ['deploy/**'])
  expect(coveringRule((await fresh()).paths.protect, join(h.workspace, 'deploy/run.sh'))?.rule).toBe('deploy/**')
  await h.root.settings.set('sandbox.denyRead', ['/srv/tokens'])
  expect(coveringRule((await fresh()).paths.denyRead, '/srv/tokens/a')?.rule).toBe('/srv/tokens')

  policy.setMode(session, 'read-only', 'user:cli-flag')
  expect(await fresh()).toMatchObject({ mode: 'read-only', writableRoots: [] })
  policy.setMode(session, 'workspace-write', 'user:cli-flag')
  expect((await fresh()).mode).toBe('workspace-write')

  const plugin = h.root.plugin({
    name: 'loads-prompts',
    apply: (ctx) => policy.protectLoaded(ctx, ['prompts/'], 'a test plugin'),
  })
  await plugin
  expect(coveringRule((await fresh()).paths.protect, join(h.workspace, 'prompts/x.md'))?.rule).toBe('prompts/')
  plugin.dispose()
  expect(coveringRule((await fresh()).paths.protect, join(h.workspace, 'prompts/x.md'))).toBeUndefined()

  // The attacker's angle: `.agents` is not protected, `.agents/skills` is. The model makes `.agents` a link to
  // a folder elsewhere; a rule set kept from before would protect only the lexical path, so a write through
  // the link's real path would pass. The next authority protects the real path too.
  const elsewhere = tempDir('dsh-elsewhere-')
  mkdirSync(join(elsewhere, 'skills'))
  symlinkSync(elsewhere, join(h.workspace, '.agents'))
  expect(coveringRule((await fresh()).paths.protect, join(realpathSync(elsewhere), 'skills/evil/SKILL.md'))?.rule).toBe(
    '.agents/skills/',
  )
})
