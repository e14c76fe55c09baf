import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, expect, test } from 'vitest'
import type { Agent } from '@dsh/agent'
import type { ApprovalRequest } from '@dsh/approval'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'
import { outsideDir } from '@dsh/test-harness/world'
import type { SessionEvent } from '@dsh/session'
import type { SubagentResult } from '@dsh/subagent'

// Subagents in the real headless composition: the spawn provider, the `task` tool, the real file tools,
// bash in bubblewrap, approvals and the session log. Only the model is scripted.
let h: Harness
afterEach(async () => h?.dispose())

async function boot(options: { homeFiles?: Record<string, string>; workspaceFiles?: Record<string, string> } = {}) {
  h = await bootComposition({ patch: scriptedPatch({ fixtureTools: true }), ...options })
  return h
}

const task = (id: string, args: Record<string, unknown>) =>
  toolCall(id, 'task', { description: 'a small job', prompt: 'do it', ...args })
const childOf = (parent: Agent): Agent => {
  const [child] = [...parent.children]
  if (!child) throw new Error('the parent has no child')
  return child
}
const kinds = (agent: Agent, type: string) =>
  agent.session.events.filter((event) => event.type === type) as SessionEvent[]
const turnEnds = (agent: Agent) => kinds(agent, 'turn/end').map((event) => (event.data as { reason: string }).reason)
const resultOf = (agent: Agent, callId: string) => {
  const event = kinds(agent, 'tool/result').find(
    (candidate) => (candidate.data as { callId: string }).callId === callId,
  )
  if (!event) throw new Error(`no tool/result ${callId} in ${agent.session.id}`)
  return event.data as { content: { text: string }[]; error?: { code: string; message: string } }
}

test('a spawned child edits a file in the workspace, and both logs link to each other', async () => {
  await boot()
  const stopped: SubagentResult[] = []
  h.root.on('subagent/stopped', async (_parent, result) => void stopped.push(result))
  h.root.scriptedLlm.enqueue(
    task('t1', { description: 'write the notes', prompt: 'Write "new" to notes.txt' }),
    toolCall('w1', 'write', { path: 'notes.txt', content: 'new\n' }),
    { text: 'wrote notes.txt' },
    { text: 'the child did it' },
  )
  const result = await h.run('delegate it')
  expect(result).toMatchObject({ reason: 'completed', text: 'the child did it' })
  expect(readFileSync(join(h.workspace, 'notes.txt'), 'utf8')).toBe('new\n')
  const parent = await h.agent()
  const child = childOf(parent)
  expect(h.events('subagent/start').map((event) => event.data)).toEqual([
    {
      childSessionId: child.session.id,
      kind: 'spawn',
      agentType: 'general',
      description: 'write the notes',
      ceiling: 'workspace-write',
      callId: 't1',
    },
  ])
  expect(h.events('subagent/end').map((event) => event.data)).toEqual([
    { childSessionId: child.session.id, status: 'completed', text: 'wrote notes.txt' },
  ])
  expect(child.session.last('subagent/parent')?.data).toMatchObject({
    parentSessionId: parent.session.id,
    kind: 'spawn',
    depth: 1,
    callId: 't1',
  })
  expect(h.toolText('t1')).toContain('wrote notes.txt')
  expect(h.toolText('t1')).toContain(`session ${child.session.id}`)
  // The child saw only its task, not the parent's conversation.
  const childRequest = h.root.scriptedLlm.requests[1]!
  expect(JSON.stringify(childRequest.messages)).not.toContain('delegate it')
  expect(stopped).toEqual([{ childSessionId: child.session.id, status: 'completed', text: 'wrote notes.txt' }])
})

test('a child cannot write outside the workspace while its parent runs danger-full-access under a workspace-write ceiling', async () => {
  const outside = outsideDir()
  const target = join(outside, 'pwned.txt')
  const viaBash = join(outside, 'bash.txt')
  const viaUnconfined = join(outside, 'unconfined.txt')
  await boot()
  const parent = await h.agent()
  h.root.sandboxPolicy.setMode(parent.session, 'danger-full-access', 'user:cli-flag')
  // Whoever answers for the parent allows everything: no approval may widen the child anyway.
  const asked: ApprovalRequest[] = []
  h.root.approval.answerer(h.root, async (request) => (asked.push(request), 'allow_once'), { actor: 'user:cli-flag' })
  h.root.scriptedLlm.enqueue(
    task('t1', { prompt: 'escape' }),
    toolCall('w1', 'write', { path: target, content: 'pwned' }),
    toolCall('b1', 'bash', { command: `echo pwned > ${viaBash}` }),
    toolCall('b2', 'bash', { command: `echo pwned > ${viaUnconfined}`, sandbox: false, justification: 'I need it' }),
    { text: 'tried' },
    { text: 'done' },
  )
  await h.run('go')
  const child = childOf(parent)
  // The child, not its parent, is asked to raise its mode from outside: the ceiling holds.
  h.root.sandboxPolicy.setMode(child.session, 'danger-full-access', 'user:web-tab')
  expect(h.root.sandboxPolicy.mode(child.session)).toBe('workspace-write')
  expect(h.root.sandboxPolicy.mode(parent.session)).toBe('danger-full-access')
  expect(existsSync(target)).toBe(false)
  expect(existsSync(viaBash)).toBe(false)
  expect(existsSync(viaUnconfined)).toBe(false)
  expect(resultOf(child, 'w1').error?.code).toBe('DENIED')
  expect(resultOf(child, 'w1').error?.message).toContain('ceiling workspace-write')
  expect(resultOf(child, 'b1').error).toBeUndefined() // it ran, confined: bash reports the refused redirect
  expect(resultOf(child, 'b2').error?.code).toBe('DENIED')
  expect(asked).toEqual([])
  expect(child.session.last('sandbox/ceiling')?.data).toEqual({
    mode: 'workspace-write',
    why: `subagent of session ${parent.session.id}`,
  })
})

test("a child's approval is asked of its parent's answerer, naming the child; with nobody to answer it is refused", async () => {
  await boot({ homeFiles: { 'settings.yaml': "permissions.ask: ['bash(touch *)']\n" } })
  const parent = await h.agent()
  const asked: ApprovalRequest[] = []
  h.root.approval.answerer(
    h.root,
    async (request) => (asked.push(request), request.sessionId === parent.session.id ? 'allow_once' : 'reject'),
    { actor: 'user:cli-flag' },
  )
  h.root.scriptedLlm.enqueue(
    task('t1', { description: 'touch it' }),
    toolCall('b1', 'bash', { command: 'touch made.txt' }),
    { text: 'touched' },
    { text: 'ok' },
  )
  await h.run('go')
  const child = childOf(parent)
  expect(asked).toHaveLength(1)
  expect(asked[0]).toMatchObject({ sessionId: parent.session.id, tool: 'bash' })
  expect(asked[0]!.summary).toContain('subagent "touch it"')
  expect(existsSync(join(h.workspace, 'made.txt'))).toBe(true)
  expect(kinds(child, 'approval/decided').map((event) => (event.data as { answer: string }).answer)).toEqual([
    'allow_once',
  ])
  expect(kinds(parent, 'approval/asked')).toEqual([])
})

test("a child's approval is refused when nobody answers for its parent", async () => {
  await boot({ homeFiles: { 'settings.yaml': "permissions.ask: ['bash(touch *)']\n" } })
  const parent = await h.agent()
  h.root.scriptedLlm.enqueue(
    task('t1', {}),
    toolCall('b1', 'bash', { command: 'touch made.txt' }),
    { text: 'could not' },
    { text: 'ok' },
  )
  await h.run('go')
  const child = childOf(parent)
  expect(resultOf(child, 'b1').error?.code).toBe('APPROVAL_REJECTED')
  expect(existsSync(join(h.workspace, 'made.txt'))).toBe(false)
})

test('cancelling the parent mid-child leaves both logs ending aborted', async () => {
  await boot()
  const parent = await h.agent()
  h.root.scriptedLlm.enqueue(task('t1', {}), toolCall('w', 'wait', { ms: 120_000, label: 'busy' }))
  parent.followup('go')
  await expect.poll(() => parent.children.size && [...parent.children][0]!.running, { timeout: 30_000 }).toBe(true)
  await new Promise((resolve) => setTimeout(resolve, 200))
  const started = Date.now()
  parent.cancel()
  expect(await parent.whenIdle()).toMatchObject({ reason: 'aborted' })
  const child = childOf(parent)
  expect(Date.now() - started).toBeLessThan(40_000) // the child's call would wait 120 s
  expect(turnEnds(parent)).toEqual(['aborted'])
  expect(turnEnds(child)).toEqual(['aborted'])
  expect(h.events('subagent/end').at(-1)?.data).toMatchObject({ childSessionId: child.session.id, status: 'aborted' })
})

test("a child's crash is a typed result for the parent's model", async () => {
  await boot()
  h.root.scriptedLlm.enqueue(
    task('t1', {}),
    { error: { code: 'INVALID_REQUEST', message: 'the child model broke' } },
    { text: 'noted' },
  )
  await h.run('go')
  const error = h.toolResult('t1').error
  expect(error?.code).toBe('SUBAGENT_FAILED')
  expect(error?.message).toContain('the child model broke')
  expect(h.events('subagent/end').at(-1)?.data).toMatchObject({ status: 'failed' })
})

test('two children of one response run at the same time, and the setting bounds how many', async () => {
  for (const limit of [2, 1]) {
    await boot({ homeFiles: { 'settings.yaml': `subagent.maxConcurrent: ${limit}\n` } })
    const wait = toolCall('w', 'wait', { ms: 400, label: 'busy' })
    h.root.scriptedLlm.enqueue(
      {
        toolCalls: [
          { id: 'a', name: 'task', arguments: { description: 'one', prompt: 'one' } },
          { id: 'b', name: 'task', arguments: { description: 'two', prompt: 'two' } },
        ],
      },
      wait,
      wait,
      { text: 'x' },
      { text: 'y' },
      { text: 'both' },
    )
    await h.run('two jobs')
    const [first, second] = [...(await h.agent()).children].map((child) => ({
      start: kinds(child, 'turn/start')[0]!.time,
      end: kinds(child, 'turn/end')[0]!.time,
    }))
    const overlapped = second!.start < first!.end && first!.start < second!.end
    expect(overlapped).toBe(limit === 2)
    expect(h.toolResult('a').error).toBeUndefined()
    expect(h.toolResult('b').error).toBeUndefined()
    await h.dispose()
  }
})

test('agent types come from .claude/agents and .dsh/agents; explore is offered and may call only read tools', async () => {
  const reviewer =
    '---\nname: reviewer\ndescription: Reviews a change\ntools: read, grep\nmodel: scripted-2\n---\nYou review changes.\n'
  await boot({
    workspaceFiles: {
      '.claude/agents/reviewer.md': reviewer,
      '.dsh/agents/tester.md': '---\nname: tester\ndescription: Runs tests\n---\nRun the tests.\n',
    },
  })
  const names = (await h.root.subagents.types(h.workspace)).map((type) => type.name)
  expect(names).toEqual(['general', 'explore', 'reviewer', 'tester'])
  h.root.scriptedLlm.enqueue(
    task('t1', { agent_type: 'explore' }),
    toolCall('b1', 'bash', { command: 'touch x.txt' }),
    { text: 'looked' },
    task('t2', { agent_type: 'reviewer' }),
    { text: 'reviewed' },
    task('t3', { agent_type: 'nobody' }),
    { text: 'done' },
  )
  await h.run('look around')
  const [explore, review] = [...(await h.agent()).children]
  const exploreTools = h.root.scriptedLlm.requests[1]!.tools!.map((tool) => tool.name).sort()
  expect(exploreTools).toEqual(['glob', 'grep', 'read'])
  expect(resultOf(explore!, 'b1').error?.message).toContain('may use only read, glob, grep')
  expect(existsSync(join(h.workspace, 'x.txt'))).toBe(false)
  expect(h.root.sandboxPolicy.mode(explore!.session)).toBe('read-only')
  expect(review!.route).toEqual({ provider: 'scripted', model: 'scripted-2' })
  expect(JSON.stringify(review!.session.messages())).toContain('You review changes.')
  expect(h.toolResult('t3').error).toMatchObject({ code: 'SUBAGENT_NOT_FOUND' })
  expect(h.toolResult('t3').error?.message).toContain('known: general, explore, reviewer, tester')
})

test('a child can be continued with a follow-up; another session cannot be reached that way', async () => {
  await boot()
  h.root.scriptedLlm.enqueue(task('t1', { prompt: 'remember 42' }), { text: 'remembered' }, { text: 'ok' })
  await h.run('one')
  const parent = await h.agent()
  const child = childOf(parent)
  const stranger = await h.root.agents.create({ cwd: h.workspace })
  h.root.scriptedLlm.enqueue(
    task('t2', { prompt: 'what was it?', session: child.session.id }),
    { text: 'it was 42' },
    task('t3', { prompt: 'hi', session: stranger.session.id }),
    { text: 'done' },
  )
  await h.run('two')
  expect(h.toolText('t2')).toContain('it was 42')
  expect(turnEnds(child)).toEqual(['completed', 'completed'])
  expect(h.root.scriptedLlm.requests[4]!.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user'])
  expect(h.toolResult('t3').error).toMatchObject({ code: 'SUBAGENT_NOT_FOUND' })
  expect(stranger.session.events.filter((event) => event.type === 'user/message')).toEqual([])
})

test('a child cannot start children of its own (maxDepth 1)', async () => {
  await boot()
  h.root.scriptedLlm.enqueue(task('t1', {}), task('t9', {}), { text: 'no nesting' }, { text: 'ok' })
  await h.run('go')
  const child = childOf(await h.agent())
  expect(resultOf(child, 't9').error?.message).toContain('already a subagent')
  expect(child.children.size).toBe(0)
})
