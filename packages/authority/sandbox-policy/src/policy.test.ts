import { mkdirSync, mkdtempSync, realpathSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, expect, test } from 'vitest'
import { bootComposition, type Harness } from '@dsh/test-harness'
import { SandboxPolicy } from './index.ts'

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function boot(options: Parameters<typeof bootComposition>[0] = {}): Promise<Harness> {
  const h = await bootComposition(options)
  cleanups.push(() => h.dispose())
  return h
}

test('bundle-base mounts the policy, and a session that chose nothing writes only in its real working directory', async () => {
  const h = await boot()
  expect(h.root.sandboxPolicy).toBeInstanceOf(SandboxPolicy)
  const { session } = await h.agent()
  const authority = await h.root.sandboxPolicy.authority(session)
  expect(authority).toMatchObject({
    mode: 'workspace-write',
    writableRoots: [realpathSync(h.workspace)],
    network: { kind: 'proxy', socket: await h.root.network.endpoint(session) },
  })
  expect(authority.writableRoots).not.toContain(realpathSync(tmpdir()))
})

test('configured roots and the temp directory are added when asked; a missing root is left out', async () => {
  const extra = mkdtempSync(join(tmpdir(), 'dsh-extra-root-'))
  cleanups.push(() => rmSync(extra, { recursive: true, force: true }))
  const missing = join(extra, 'not-there')
  const h = await boot({
    patch: `- id: sandbox-policy\n  config: { writableRoots: ['${extra}', '${missing}'], tempDir: true }\n`,
  })
  const { session } = await h.agent()
  expect((await h.root.sandboxPolicy.authority(session)).writableRoots).toEqual([
    realpathSync(h.workspace),
    realpathSync(extra),
    realpathSync(tmpdir()),
  ])
})

test('a mode switch is logged and applies to the next authority; read-only has no writable roots', async () => {
  const h = await boot()
  const { session } = await h.agent()
  expect(h.root.sandboxPolicy.setMode(session, 'read-only', 'user:cli-flag')).toBe(true)
  expect(h.root.sandboxPolicy.setMode(session, 'read-only', 'user:cli-flag')).toBe(false)
  expect(h.events('sandbox/mode').map((event) => event.data)).toEqual([{ mode: 'read-only', actor: 'user:cli-flag' }])
  expect(await h.root.sandboxPolicy.authority(session)).toMatchObject({ mode: 'read-only', writableRoots: [] })
  expect(() => h.root.sandboxPolicy.setMode(session, 'everything' as never, 'user:cli-flag')).toThrow(
    /unknown sandbox mode "everything"/,
  )
})

test('a mode switch without a known actor is refused and nothing is logged, directly or by append', async () => {
  const h = await boot()
  const { session } = await h.agent()
  expect(() => h.root.sandboxPolicy.setMode(session, 'danger-full-access', 'agent' as never)).toThrow(
    'sandboxPolicy.setMode: actor must be one of',
  )
  expect(() => h.root.sandboxPolicy.setMode(session, 'danger-full-access', undefined as never)).toThrow(
    'sandboxPolicy.setMode: actor must be one of',
  )
  expect(() => session.append('sandbox/mode', { mode: 'danger-full-access' } as never)).toThrow(
    /cannot append sandbox\/mode .*actor must be one of/,
  )
  expect(h.events('sandbox/mode')).toEqual([])
  expect(h.root.sandboxPolicy.mode(session)).toBe('workspace-write')
})

test('the backend probe is recorded once per session, as the sandbox row found it', async () => {
  const h = await boot()
  const { session } = await h.agent()
  await Promise.all([h.root.sandboxPolicy.authority(session), h.root.sandboxPolicy.authority(session)])
  await h.root.sandboxPolicy.authority(session)
  const probes = h.events('sandbox/probe')
  expect(probes).toHaveLength(1)
  expect(probes[0]!.data).toEqual(await h.root.sandbox.probe())
  expect(probes[0]!.data).toMatchObject({ backend: 'bubblewrap', available: true })
})

test('a resumed session keeps the mode it chose and does not record the same probe again', async () => {
  const home = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-home-')))
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-ws-')))
  mkdirSync(join(workspace, 'sub'))
  cleanups.push(
    () => rmSync(home, { recursive: true, force: true }),
    () => rmSync(workspace, { recursive: true, force: true }),
  )
  const first = await bootComposition({ home, workspace })
  const agent = await first.root.agents.create({ cwd: workspace })
  first.root.sandboxPolicy.setMode(agent.session, 'danger-full-access', 'user:cli-flag')
  await first.root.sandboxPolicy.authority(agent.session)
  const id = agent.session.id
  await first.dispose()

  const second = await boot({ home, workspace })
  const resumed = await second.root.agents.resume(id)
  expect(second.root.sandboxPolicy.mode(resumed.session)).toBe('danger-full-access')
  await second.root.sandboxPolicy.authority(resumed.session)
  expect(resumed.session.all('sandbox/probe')).toHaveLength(1)
})

test("confined modes get the session's proxy socket, danger-full-access the host network, and no network row no network", async () => {
  const h = await boot()
  const { session } = await h.agent()
  for (const mode of ['read-only', 'workspace-write'] as const) {
    h.root.sandboxPolicy.setMode(session, mode, 'user:cli-flag')
    const { network } = await h.root.sandboxPolicy.authority(session)
    expect(network).toEqual({ kind: 'proxy', socket: expect.stringMatching(/proxy\.sock$/) })
    expect(statSync((network as { socket: string }).socket).isSocket()).toBe(true)
  }
  h.root.sandboxPolicy.setMode(session, 'danger-full-access', 'user:cli-flag')
  expect((await h.root.sandboxPolicy.authority(session)).network).toEqual({ kind: 'host' })

  const bare = await boot({ patch: '- id: network\n  disabled: true\n' })
  const other = await bare.agent()
  expect(bare.root.get('network')).toBeUndefined()
  expect((await bare.root.sandboxPolicy.authority(other.session)).network).toEqual({ kind: 'none' })
})

test('a ceiling caps every mode logged before or after it, is the mode of a session that chose none, and holds after resume', async () => {
  const home = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-home-')))
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-ws-')))
  cleanups.push(
    () => rmSync(home, { recursive: true, force: true }),
    () => rmSync(workspace, { recursive: true, force: true }),
  )
  const first = await bootComposition({ home, workspace })
  const agent = await first.root.agents.create({ cwd: workspace })
  const policy = first.root.sandboxPolicy
  policy.setCeiling(agent.session, 'read-only', 'subagent of session x')
  expect(policy.mode(agent.session)).toBe('read-only')
  expect(await policy.authority(agent.session)).toMatchObject({ mode: 'read-only', writableRoots: [] })
  policy.setMode(agent.session, 'danger-full-access', 'user:web-tab')
  policy.setCeiling(agent.session, 'danger-full-access', 'a later, higher ceiling changes nothing')
  expect(policy.mode(agent.session)).toBe('read-only')
  expect(() => policy.setCeiling(agent.session, 'all' as never, 'x')).toThrow(/unknown sandbox mode "all"/)
  expect(() => agent.session.append('sandbox/ceiling', { mode: 'read-only', why: '' })).toThrow(
    'data.why must be a non-empty string',
  )
  const id = agent.session.id
  await agent.session.flush()
  await first.dispose()
  const second = await boot({ home, workspace })
  const resumed = await second.root.agents.resume(id)
  expect(second.root.sandboxPolicy.mode(resumed.session)).toBe('read-only')
  expect(second.root.sandboxPolicy.ceiling(resumed.session)).toBe('read-only')
})
