import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import type { Agent } from '@dsh/agent'
import type {} from '@dsh/permission-presets'
import type {} from '@dsh/llm-scripted'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'
import { eventually, processesWith, processRunning } from '@dsh/test-harness/world'

// Plugins an agent preset mounts for one agent: `minimal` mounts the persistent bash in its agent's scope.

async function boot(homeFiles: Record<string, string> = {}): Promise<Harness> {
  const h = await bootComposition({ patch: scriptedPatch(), homeFiles })
  onTestFinished(() => h.dispose())
  return h
}

const bash = (id: string, command: string) => toolCall(id, 'bash', { command })
const resultText = (agent: Agent, callId: string) =>
  (
    (
      agent.session.events.find((event) => event.type === 'tool/result' && (event.data as any).callId === callId)
        ?.data as any
    )?.content ?? []
  )
    .map((block: any) => block.text)
    .join('')

async function turn(h: Harness, agent: Agent, ...script: Parameters<Harness['root']['scriptedLlm']['enqueue']>) {
  h.root.scriptedLlm.enqueue(...script)
  agent.followup('go')
  await agent.whenIdle()
}

/** The host pid of the shell that started `sleep <tag>` (its parent), once the sleep runs. */
async function shellOf(tag: string): Promise<number> {
  expect(await eventually(() => processesWith(`sleep ${tag}`).length > 0, 10_000)).toBe(true)
  const status = readFileSync(`/proc/${processesWith(`sleep ${tag}`)[0]}/status`, 'utf8')
  return Number(/^PPid:\s+(\d+)/m.exec(status)![1])
}

test('minimal and standard in one process: only the minimal agent gets a persistent bash, its own prompt section, and its shell ends with it', async () => {
  const h = await boot()
  const minimal = await h.root.agents.create({ cwd: h.workspace })
  h.root.agentPresets.choose(minimal.session, 'minimal', 'client:sdk')
  const standard = await h.root.agents.create({ cwd: h.workspace })
  const tag = String(6_000_000 + Math.floor(Math.random() * 1_000_000))
  await turn(h, minimal, bash('m1', `mkdir -p sub && cd sub; sleep ${tag} &`), bash('m2', 'pwd'), { text: 'ok' })
  await turn(h, standard, bash('s1', 'mkdir -p other && cd other'), bash('s2', 'pwd'), { text: 'ok' })

  expect(resultText(minimal, 'm2')).toBe(join(h.workspace, 'sub'))
  expect(resultText(standard, 's2')).toBe(h.workspace)
  const requests = h.root.scriptedLlm.requests
  const [minimalRequest, standardRequest] = [requests[0]!, requests[3]!]
  expect(minimalRequest.tools!.map((tool) => tool.name)).toEqual(['bash', 'str_replace_editor'])
  expect(minimalRequest.tools!.find((tool) => tool.name === 'bash')!.description).toMatch(
    /^Run a bash command in your persistent shell/,
  )
  expect(standardRequest.tools!.find((tool) => tool.name === 'bash')!.description).not.toMatch(/persistent/)
  expect(standardRequest.tools!.map((tool) => tool.name)).toEqual(expect.arrayContaining(['read', 'write', 'task']))
  expect(minimalRequest.system).toContain('bash runs in one persistent shell of yours')
  expect(minimalRequest.system).not.toContain('each bash call starts a fresh shell')
  expect(standardRequest.system).toContain('each bash call starts a fresh shell')
  expect(standardRequest.system).not.toContain('persistent shell')
  expect(minimal.session.last('agent/preset')?.data.plugins).toEqual([
    { name: '@dsh/tool-bash-persistent', config: {} },
  ])

  const shell = await shellOf(tag)
  expect(processRunning(shell)).toBe(true)
  await minimal.dispose()
  expect(await eventually(() => !processRunning(shell) && processesWith(`sleep ${tag}`).length === 0, 10_000)).toBe(
    true,
  )
  // The standard agent still has the profile's one-shot bash.
  await turn(h, standard, bash('s3', 'pwd'), { text: 'ok' })
  expect(resultText(standard, 's3')).toBe(h.workspace)
})

test('a resumed minimal session mounts its persistent bash again from the log', async () => {
  const h = await boot()
  const first = await h.root.agents.create({ cwd: h.workspace })
  h.root.agentPresets.choose(first.session, 'minimal', 'client:sdk')
  await turn(h, first, { text: 'ok' })
  const id = first.session.id
  await first.dispose()
  const resumed = await h.root.agents.resume(id)
  await turn(h, resumed, bash('a', 'mkdir -p kept && cd kept'), bash('b', 'pwd'), { text: 'ok' })
  expect(resultText(resumed, 'b')).toBe(join(h.workspace, 'kept'))
})

test("a minimal agent's mounted bash runs under the session's sandbox mode: read-only writes nothing", async () => {
  const h = await boot()
  const agent = await h.root.agents.create({ cwd: h.workspace })
  h.root.agentPresets.choose(agent.session, 'minimal', 'client:sdk')
  h.root.permissionPresets.set(agent.session, 'read-only', 'user:cli-flag')
  await turn(h, agent, bash('w', 'echo pwned > pwned.txt'), { text: 'ok' })
  expect(resultText(agent, 'w')).toMatch(/Read-only file system/)
  expect(existsSync(join(h.workspace, 'pwned.txt'))).toBe(false)
})

test('a user preset cannot mount a plugin outside the mountable list (a provider, an unknown package): an error at its line, nothing logged', async () => {
  const h = await boot({
    'presets/widen.yaml':
      'description: swaps the fs\nplugins:\n  - name: "@dsh/tool-bash-persistent"\n  - name: "@dsh/fs-local"\n',
  })
  const agent = await h.root.agents.create({ cwd: h.workspace })
  const file = join(h.home, 'presets', 'widen.yaml')
  expect(() => h.root.agentPresets.choose(agent.session, 'widen', 'user:cli-flag')).toThrow(
    `${file}:4: plugin "@dsh/fs-local" cannot be mounted per agent (mountable: @dsh/tool-bash-persistent, @dsh/tool-run-code)`,
  )
  expect(agent.session.last('agent/preset')).toBeUndefined()
  rmSync(file)
  writeFileSync(join(h.home, 'presets', 'ghost.yaml'), 'plugins:\n  - name: "@dsh/no-such-package"\n')
  expect(() => h.root.agentPresets.choose(agent.session, 'ghost', 'user:cli-flag')).toThrow(
    `${join(h.home, 'presets', 'ghost.yaml')}:2: plugin "@dsh/no-such-package" cannot be mounted per agent`,
  )
  expect(agent.session.last('agent/preset')).toBeUndefined()
})

test("a user preset's plugin config is checked against the plugin's schema at its line", async () => {
  const h = await boot({
    'presets/slow.yaml':
      'plugins:\n  - name: "@dsh/tool-bash-persistent"\n    config: { defaultTimeoutMs: 5, sandbox: false }\n',
  })
  expect(() => h.root.agentPresets.list()).toThrow(
    `${join(h.home, 'presets', 'slow.yaml')}:3: plugins[0] (@dsh/tool-bash-persistent): config.sandbox is not a setting of this plugin`,
  )
})

test('a preset cannot carry a sandbox mode or ceiling: such a field is refused at its line', async () => {
  const h = await boot({ 'presets/free.yaml': 'description: unconfined\nsandbox: danger-full-access\n' })
  expect(() => h.root.agentPresets.list()).toThrow(
    `${join(h.home, 'presets', 'free.yaml')}:2: "sandbox" is not a field of an agent preset`,
  )
})

test('a log naming a plugin this process may not mount per agent stops the turn before any request', async () => {
  const h = await boot()
  const agent = await h.root.agents.create({ cwd: h.workspace })
  agent.session.append('agent/preset', {
    name: 'forged',
    description: '',
    tools: {},
    compaction: true,
    source: 'built-in',
    actor: 'user:cli-flag',
    plugins: [{ name: '@dsh/fs-local' }],
  })
  const id = agent.session.id
  await agent.dispose()
  const resumed = await h.root.agents.resume(id)
  resumed.followup('go')
  await resumed.whenIdle()
  expect(h.root.scriptedLlm.requests).toHaveLength(0)
  expect(resumed.session.last('turn/end')?.data).toMatchObject({
    reason: 'blocked',
    error: {
      code: 'PRE_STEP_REJECTED',
      message: expect.stringContaining('plugin "@dsh/fs-local" cannot be mounted per agent'),
    },
  })
})

test('the mountable list itself only takes packages that declare mountsPerAgent: a provider listed there fails the boot', async () => {
  await expect(
    bootComposition({ patch: scriptedPatch({}, "- id: agent-presets\n  config: { mountable: ['@dsh/fs-local'] }\n") }),
  ).rejects.toThrow('agent-presets: mountable "@dsh/fs-local" does not declare mountsPerAgent')
})

test("a preset's own allow list still narrows the tools its plugins mount: a hidden mounted bash is UNKNOWN_TOOL and runs nothing", async () => {
  const h = await boot({
    'presets/sneaky.yaml': 'tools:\n  allow: [read]\nplugins:\n  - name: "@dsh/tool-bash-persistent"\n',
  })
  const agent = await h.root.agents.create({ cwd: h.workspace })
  h.root.agentPresets.choose(agent.session, 'sneaky', 'user:cli-flag')
  await turn(h, agent, bash('b', 'echo x > bashed.txt'), { text: 'ok' })
  expect(h.root.scriptedLlm.requests[0]!.tools!.map((tool) => tool.name)).toEqual(['read'])
  expect((agent.session.events.find((event) => event.type === 'tool/result')?.data as any)?.error?.code).toBe(
    'UNKNOWN_TOOL',
  )
  expect(existsSync(join(h.workspace, 'bashed.txt'))).toBe(false)
})

test('choosing another preset before the first turn unmounts the plugins of the one chosen before', async () => {
  const h = await boot()
  const agent = await h.root.agents.create({ cwd: h.workspace })
  h.root.agentPresets.choose(agent.session, 'minimal', 'client:acp')
  await h.root.agentPresets.mounted(agent.id)
  expect(h.root.tools.resolve('bash', agent.id)?.tool.description).toMatch(/persistent shell/)
  h.root.agentPresets.choose(agent.session, 'standard', 'client:acp')
  await turn(h, agent, bash('a', 'cd /'), bash('b', 'pwd'), { text: 'ok' })
  expect(resultText(agent, 'b')).toBe(h.workspace)
  expect(h.root.scriptedLlm.requests[0]!.system).not.toContain('persistent shell')
})
