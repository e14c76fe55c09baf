import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'
import type {} from '@dsh/llm-scripted'
import { AgentPresetFileError } from './index.ts'

async function boot(homeFiles: Record<string, string> = {}): Promise<Harness> {
  const h = await bootComposition({ patch: scriptedPatch(), homeFiles })
  onTestFinished(() => h.dispose())
  return h
}

const toolNames = (request: { tools?: { name: string }[] }) => (request.tools ?? []).map((tool) => tool.name)

/** One turn of an `explore` session, then one of a session that chose no preset, in one process. */
async function exploreThenStandard() {
  const h = await boot()
  const explore = await h.root.agents.create({ cwd: h.workspace })
  h.root.agentPresets.choose(explore.session, 'explore', 'user:cli-flag')
  const standard = await h.root.agents.create({ cwd: h.workspace })
  h.root.scriptedLlm.enqueue({ text: 'looked' }, { text: 'did' })
  explore.followup('look around')
  await explore.whenIdle()
  standard.followup('do it')
  await standard.whenIdle()
  return { h, explore, standard }
}

test('two sessions of one process, explore and standard, send different tool lists; explore carries only reading tools', async () => {
  const { h, explore, standard } = await exploreThenStandard()
  const [first, second] = h.root.scriptedLlm.requests.map(toolNames)
  expect(first).toEqual(
    ['glob', 'grep', 'history_read', 'job_list', 'job_output', 'read', 'skill', 'todo_write'].filter((name) =>
      second!.includes(name),
    ),
  )
  expect(second).toEqual(expect.arrayContaining(['bash', 'write', 'edit', 'str_replace_editor', 'task']))
  expect(explore.session.last('agent/preset')?.data).toMatchObject({
    name: 'explore',
    source: 'built-in',
    actor: 'user:cli-flag',
    compaction: true,
  })
  expect(standard.session.last('agent/preset')).toBeUndefined()
})

test("an explore session's system prompt leaves out the sections of tools it is not offered, and is what its log derives", async () => {
  const { h, explore } = await exploreThenStandard()
  const [exploreSystem, standardSystem] = h.root.scriptedLlm.requests.map((request) => request.system ?? '')
  for (const advice of ['Shell: ', 'Change part of a file with edit', 'Editor: str_replace_editor']) {
    expect(standardSystem).toContain(advice)
    expect(exploreSystem).not.toContain(advice)
  }
  expect(exploreSystem).toContain('Files: read shows numbered lines')
  expect(exploreSystem).toContain('Searching: glob finds files')
  // The request check compared each request with the log: both turns completed, and the log holds the narrowed prompt.
  expect(explore.session.last('turn/end')?.data.reason).toBe('completed')
  expect(explore.session.last('request/header')?.data.system).toBe(exploreSystem)
})

test('an explore session that calls write and bash anyway gets UNKNOWN_TOOL and no file is made', async () => {
  const h = await boot()
  const agent = await h.root.agents.create({ cwd: h.workspace })
  h.root.agentPresets.choose(agent.session, 'explore', 'user:cli-flag')
  h.root.scriptedLlm.enqueue(
    {
      toolCalls: [
        { id: 'w', name: 'write', arguments: { path: 'pwned.txt', content: 'x' } },
        { id: 'b', name: 'bash', arguments: { command: 'echo x > bashed.txt' } },
      ],
    },
    { text: 'ok' },
  )
  agent.followup('try')
  await agent.whenIdle()
  const results = agent.session.events
    .filter((event) => event.type === 'tool/result')
    .map((event: any) => event.data.error?.code)
  expect(results).toEqual(['UNKNOWN_TOOL', 'UNKNOWN_TOOL'])
  expect(existsSync(join(h.workspace, 'pwned.txt'))).toBe(false)
  expect(existsSync(join(h.workspace, 'bashed.txt'))).toBe(false)
})

test('minimal offers bash and str_replace_editor only and turns automatic compaction off', async () => {
  const h = await boot()
  const agent = await h.root.agents.create({ cwd: h.workspace })
  h.root.agentPresets.choose(agent.session, 'minimal', 'client:sdk')
  h.root.scriptedLlm.enqueue({ text: 'ok' })
  agent.followup('hi')
  await agent.whenIdle()
  expect(toolNames(h.root.scriptedLlm.requests[0]!)).toEqual(['bash', 'str_replace_editor'])
  expect(h.root.agentPresets.compacts(agent.session)).toBe(false)
})

test('a resumed session keeps its preset from the log, even after the user file that defined it is gone', async () => {
  const h = await boot({ 'presets/reader.yaml': 'description: reads only\ntools:\n  allow: [read]\n' })
  const agent = await h.root.agents.create({ cwd: h.workspace })
  h.root.agentPresets.choose(agent.session, 'reader', 'user:web-tab')
  const id = agent.session.id
  await agent.dispose()
  const { rmSync } = await import('node:fs')
  rmSync(join(h.home, 'presets'), { recursive: true })
  const resumed = await h.root.agents.resume(id)
  h.root.scriptedLlm.enqueue({ text: 'ok' })
  resumed.followup('again')
  await resumed.whenIdle()
  expect(toolNames(h.root.scriptedLlm.requests[0]!)).toEqual(['read'])
  expect(resumed.session.last('agent/preset')?.data.source).toBe(join(h.home, 'presets', 'reader.yaml'))
})

test('a subagent of an explore session cannot offer a tool its parent lacks', async () => {
  const h = await boot({ 'presets/delegating.yaml': 'tools:\n  allow: [read, task]\n' })
  const agent = await h.root.agents.create({ cwd: h.workspace })
  h.root.agentPresets.choose(agent.session, 'delegating', 'user:cli-flag')
  h.root.scriptedLlm.enqueue(
    toolCall('t', 'task', { description: 'write it', prompt: 'write a file' }),
    { text: 'child done' },
    { text: 'parent done' },
  )
  agent.followup('delegate')
  await agent.whenIdle()
  const childRequest = h.root.scriptedLlm.requests[1]!
  expect(toolNames(childRequest).every((name) => ['read', 'task'].includes(name))).toBe(true)
  expect(toolNames(childRequest)).toContain('read')
})

test('a bad user preset file is one error naming the file and the line', async () => {
  const h = await boot({ 'presets/broken.yaml': 'description: fine\ntools:\n  allow: [read]\ncompation: false\n' })
  const agent = await h.root.agents.create({ cwd: h.workspace })
  const file = join(h.home, 'presets', 'broken.yaml')
  expect(() => h.root.agentPresets.choose(agent.session, 'explore', 'user:cli-flag')).toThrow(AgentPresetFileError)
  expect(() => h.root.agentPresets.list()).toThrow(
    `${file}:4: "compation" is not a field of an agent preset (description, tools, compaction, plugins, direct)`,
  )
  expect(agent.session.last('agent/preset')).toBeUndefined()
})

test('an unknown preset and a preset chosen after the first turn are refused by name', async () => {
  const h = await boot()
  const agent = await h.root.agents.create({ cwd: h.workspace })
  expect(() => h.root.agentPresets.choose(agent.session, 'nope', 'user:cli-flag')).toThrow(
    'there is no agent preset "nope" (known: standard, explore, minimal, code)',
  )
  h.root.scriptedLlm.enqueue({ text: 'ok' })
  agent.followup('hi')
  await agent.whenIdle()
  expect(() => h.root.agentPresets.choose(agent.session, 'explore', 'user:cli-flag')).toThrow('has already run a turn')
})

test('a preset file or an agent/preset not of the schema is refused, naming the field', async () => {
  const h = await boot({ 'presets/bad-tools.yaml': 'description: fine\ntools:\n  allow: [read, 3]\n' })
  const agent = await h.agent()
  expect(() => h.root.agentPresets.choose(agent.session, 'bad-tools', 'user:cli-flag')).toThrow(
    `${join(h.home, 'presets', 'bad-tools.yaml')}:3: preset.tools.allow[1] must be a string`,
  )
  const chosen = {
    name: 'explore',
    description: 'd',
    tools: { allow: ['read'] },
    compaction: true,
    source: 'built-in',
    actor: 'user:cli-flag' as const,
  }
  expect(() => agent.session.append('agent/preset', { ...chosen, tools: { only: ['read'] } as never })).toThrow(
    'data.tools.only is not a field of tools (allow, deny)',
  )
  expect(() => agent.session.append('agent/preset', { ...chosen, plugins: [{ name: 'Not A Package' }] })).toThrow(
    'data.plugins[0].name must be a package name',
  )
  expect(agent.session.events.filter((event) => event.type === 'agent/preset')).toEqual([])
})
