import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, test, vi } from 'vitest'
import { bootComposition, scriptedPatch, type Harness } from '@dsh/test-harness'
import type { ScriptedResponse } from '@dsh/llm-scripted'
import { DSH_STOPPED } from '@dsh/session'
import type {} from '@dsh/approval'
import type {} from '@dsh/tools'

const SCRIPTED = scriptedPatch({ fixtureTools: true })

let h: Harness
afterEach(async () => h?.dispose())

async function boot(script: ScriptedResponse[], extra = '', homeFiles: Record<string, string> = {}) {
  h = await bootComposition({ patch: SCRIPTED + extra, homeFiles })
  h.root.scriptedLlm.enqueue(...script)
  return h
}

const call = (name: string, args: unknown, id?: string) => ({ name, arguments: args, ...(id ? { id } : {}) })
const waitFor = (condition: () => boolean) => vi.waitUntil(condition, { timeout: 30_000, interval: 5 })

describe('a turn', () => {
  test('a text answer is logged as chunks and one message, and the turn completes', async () => {
    await boot([{ text: 'Hello there', pieces: 3 }])
    const result = await h.run('hi')
    expect(result).toMatchObject({ reason: 'completed', text: 'Hello there' })
    expect(h.types()).toEqual([
      'turn/start',
      'model/route',
      'step/start',
      'user/message',
      'request/header',
      'request/context',
      'assistant/chunk',
      'assistant/chunk',
      'assistant/chunk',
      'assistant/message',
      'step/end',
      'turn/end',
    ])
    expect(h.events('turn/end')[0]!.data.reason).toBe('completed')
    const request = h.root.scriptedLlm.requests[0]!
    expect(request.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }])
    const names = request.tools.map((tool) => tool.name)
    expect(names).toEqual([...names].sort())
    expect(names).toEqual(expect.arrayContaining(['echo', 'read_file', 'wait', 'write_file']))
  })

  test('a multi-step turn runs tool calls and sends their results back', async () => {
    await boot([
      { toolCalls: [call('write_file', { path: 'notes/a.txt', text: 'alpha' }, 'c1')] },
      { toolCalls: [call('read_file', { path: 'notes/a.txt' }, 'c2')] },
      { text: 'done' },
    ])
    const result = await h.run('write then read')
    expect(result.reason).toBe('completed')
    expect(readFileSync(join(h.workspace, 'notes/a.txt'), 'utf8')).toBe('alpha')
    expect(h.toolResult('c2')).toEqual({ callId: 'c2', content: [{ type: 'text', text: 'alpha' }] })
    const third = h.root.scriptedLlm.requests[2]!.messages
    expect(third.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool'])
    expect(h.events('step/start')).toHaveLength(3)
  })

  test('parallel safe calls finish out of order but their results are logged in model order', async () => {
    await boot([
      {
        toolCalls: [
          call('wait', { ms: 150, label: 'slow' }, 's'),
          call('wait', { ms: 10, label: 'fast' }, 'f'),
          call('echo', { text: 'x' }, 'e'),
        ],
      },
      { text: 'ok' },
    ])
    await h.run('go')
    expect(h.events('tool/result').map((event) => event.data.callId)).toEqual(['s', 'f', 'e'])
    expect(h.events('tool/result').map((event) => event.data.content[0])).toEqual([
      { type: 'text', text: 'slow done' },
      { type: 'text', text: 'fast done' },
      { type: 'text', text: 'x' },
    ])
  })

  test('an unknown tool and bad arguments come back to the model as typed error results', async () => {
    await boot([
      {
        toolCalls: [
          call('teleport', { to: 'mars' }, 'u'),
          call('echo', { words: 3 }, 'b'),
          call('echo', 'not json{', 'j'),
        ],
      },
      { text: 'sorry' },
    ])
    await h.run('go')
    expect(h.toolResult('u').error?.code).toBe('UNKNOWN_TOOL')
    expect(h.toolResult('u').content[0]).toMatchObject({
      text: expect.stringMatching(
        /^There is no tool named "teleport"\. Available tools: .*echo.*read_file.*wait.*write_file/,
      ),
    })
    expect(h.toolResult('b').error?.code).toBe('INVALID_ARGS')
    expect(h.toolResult('b').error?.message).toMatch(/must have required property 'text'/)
    expect(h.toolResult('j').error?.code).toBe('INVALID_ARGS')
    expect(h.root.scriptedLlm.requests[1]!.messages.at(-1)).toMatchObject({
      role: 'tool',
      content: [{ isError: true }],
    })
  })

  test('maxSteps ends a turn that keeps calling tools', async () => {
    await boot(
      Array.from({ length: 5 }, (_, i) => ({ toolCalls: [call('echo', { text: `${i}` })] })),
      '- id: agent-loop\n  config: { maxSteps: 3 }\n',
    )
    const result = await h.run('loop forever')
    expect(result.reason).toBe('max-steps')
    expect(h.events('step/start')).toHaveLength(3)
    expect(h.events('turn/end')[0]!.data).toMatchObject({ reason: 'max-steps', error: { code: 'MAX_STEPS' } })
  })

  test('the agent.maxSteps setting in settings.yaml wins over the row default', async () => {
    await boot(
      Array.from({ length: 5 }, (_, i) => ({ toolCalls: [call('echo', { text: `${i}` })] })),
      '',
      { 'settings.yaml': 'agent.maxSteps: 2\n' },
    )
    expect((await h.run('loop')).reason).toBe('max-steps')
    expect(h.events('step/start')).toHaveLength(2)
  })

  test("an agent's own maxSteps replaces the setting, above it as well as below", async () => {
    await boot(
      [...Array.from({ length: 4 }, (_, i) => ({ toolCalls: [call('echo', { text: `${i}` })] })), { text: 'done' }],
      '',
      { 'settings.yaml': 'agent.maxSteps: 2\n' },
    )
    ;(await h.agent()).maxSteps = 6
    expect(await h.run('loop')).toMatchObject({ reason: 'completed', text: 'done' })
    expect(h.events('step/start')).toHaveLength(5)
  })
})

describe('policy and approval', () => {
  test('a pre-execute deny refuses the call and the file is absent', async () => {
    await boot([{ toolCalls: [call('write_file', { path: 'x.txt', text: 'no' }, 'w')] }, { text: 'ok' }])
    h.root.on('tools/pre-execute', async (invocation, next) =>
      invocation.name === 'write_file' ? { action: 'deny', reason: 'writes are off today' } : next(),
    )
    await h.run('write')
    expect(existsSync(join(h.workspace, 'x.txt'))).toBe(false)
    expect(h.toolResult('w').error).toEqual({ code: 'DENIED', message: 'The call was denied: writes are off today' })
    expect(h.types()).not.toContain('tool/dispatched')
  })

  test('an approved call runs; a rejected one does not', async () => {
    await boot([
      {
        toolCalls: [
          call('write_file', { path: 'protected/a.txt', text: 'yes' }, 'a'),
          call('write_file', { path: 'protected/b.txt', text: 'no' }, 'b'),
        ],
      },
      { text: 'ok' },
    ])
    const asked: string[] = []
    h.root.approval.answerer(
      h.root,
      async (request) => (asked.push(request.summary), request.callId === 'a' ? 'allow_once' : 'reject'),
    )
    await h.run('write both')
    expect(asked).toEqual(['write protected/a.txt', 'write protected/b.txt'])
    expect(existsSync(join(h.workspace, 'protected/a.txt'))).toBe(true)
    expect(existsSync(join(h.workspace, 'protected/b.txt'))).toBe(false)
    expect(h.toolResult('b').error?.code).toBe('APPROVAL_REJECTED')
    expect(h.events('approval/decided').map((event) => [event.data.answer, event.data.by])).toEqual([
      ['allow_once', 'user'],
      ['reject', 'user'],
    ])
  })

  test('with nobody to answer, an approval is refused and logged as such', async () => {
    await boot([{ toolCalls: [call('write_file', { path: 'protected/c.txt', text: 'x' }, 'c')] }, { text: 'ok' }])
    await h.run('write')
    expect(existsSync(join(h.workspace, 'protected/c.txt'))).toBe(false)
    expect(h.events('approval/decided')[0]!.data).toMatchObject({ answer: 'reject', by: 'no-answerer' })
    expect(h.toolResult('c').error?.message).toMatch(/nobody can answer approvals here/)
  })

  test('policy `never` rejects without asking anyone', async () => {
    await boot(
      [{ toolCalls: [call('write_file', { path: 'protected/d.txt', text: 'x' }, 'd')] }, { text: 'ok' }],
      '- id: approval\n  config: { policy: never }\n',
    )
    let asked = 0
    h.root.approval.answerer(h.root, async () => (asked++, 'allow_once'))
    await h.run('write')
    expect(asked).toBe(0)
    expect(existsSync(join(h.workspace, 'protected/d.txt'))).toBe(false)
    expect(h.events('approval/decided')[0]!.data).toMatchObject({ answer: 'reject', by: 'policy' })
  })
})

describe('cancellation and the inbox', () => {
  test('cancel mid-stream keeps the text that arrived and ends the turn aborted', async () => {
    await boot([{ text: 'partial answer', hang: true }])
    const agent = await h.agent()
    agent.followup('talk')
    await waitFor(() => h.events('assistant/chunk').length === 2)
    agent.cancel()
    const result = await agent.whenIdle()
    expect(result?.reason).toBe('aborted')
    expect(h.events('assistant/message')[0]!.data).toMatchObject({
      interrupted: true,
      finish: 'aborted',
      content: [{ type: 'text', text: 'partial answer' }],
    })
    expect(h.events('turn/end')[0]!.data.reason).toBe('aborted')
  })

  test('a turn cut because dsh is stopping (DSH_STOPPED) ends interrupted, not aborted', async () => {
    await boot([{ text: 'partial answer', hang: true }])
    const agent = await h.agent()
    agent.followup('talk')
    await waitFor(() => h.events('assistant/chunk').length === 2)
    agent.cancel('dsh is stopping', DSH_STOPPED)
    const result = await agent.whenIdle()
    expect(result?.reason).toBe('interrupted')
    expect(h.events('turn/end')[0]!.data.reason).toBe('interrupted')
    expect(h.events('assistant/message')[0]!.data).toMatchObject({ interrupted: true, finish: 'aborted' })
  })

  test('cancel mid-tool drains the running call and marks undispatched ones', async () => {
    await boot([
      {
        toolCalls: [
          call('wait', { ms: 10_000, label: 'long' }, 'l'),
          call('write_file', { path: 'later.txt', text: 'x' }, 'w'),
        ],
      },
    ])
    const agent = await h.agent()
    agent.followup('go')
    await waitFor(() => h.types().includes('tool/dispatched'))
    agent.cancel()
    const result = await agent.whenIdle()
    expect(result?.reason).toBe('aborted')
    expect(h.toolResult('l').content[0]).toEqual({ type: 'text', text: 'long stopped' })
    expect(h.toolResult('w').error?.code).toBe('ABORTED_BEFORE_DISPATCH')
    expect(existsSync(join(h.workspace, 'later.txt'))).toBe(false)
  })

  test('steer enters the running turn at the next step; inject waits without waking', async () => {
    await boot([{ toolCalls: [call('wait', { ms: 200, label: 'w' })] }, { text: 'steered' }, { text: 'second turn' }])
    const agent = await h.agent()
    agent.followup('start')
    await waitFor(() => h.types().includes('tool/dispatched'))
    agent.steer('also do this')
    agent.inject('fyi: context')
    await agent.whenIdle()
    const users = h.events('user/message').map((event) => [event.data.source, (event.data.content[0] as any).text])
    expect(users).toEqual([
      ['user', 'start'],
      ['steer', 'also do this'],
      ['inject', 'fyi: context'],
    ])
    expect(h.events('turn/start')).toHaveLength(1)
    agent.inject('quiet note')
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(agent.status).toBe('idle')
    expect(h.events('turn/start')).toHaveLength(1)
    agent.followup('next')
    await agent.whenIdle()
    expect(
      h
        .events('user/message')
        .slice(-2)
        .map((event) => event.data.source),
    ).toEqual(['user', 'inject'])
  })
})

test('an agent scope ends with the agent: effects registered in it are undone on dispose', async () => {
  await boot([])
  const agent = await h.agent()
  expect(agent.scope).toBeDefined()
  let undone = false
  agent.scope.effect(() => () => void (undone = true))
  await agent.dispose()
  expect(undone).toBe(true)
})

test('a script given in YAML config drives the scripted model (optional fields may be absent)', async () => {
  h = await bootComposition({
    patch: scriptedPatch({
      config: '{ script: [{ text: from yaml }, { error: { code: AUTH } }] }',
      fixtureTools: true,
    }),
  })
  expect((await h.run('one')).text).toBe('from yaml')
  expect((await h.run('two')).error?.code).toBe('AUTH')
  expect(h.events('user/message')[0]!.data.messageId).toEqual(expect.any(String))
})

test('a system prompt chosen for a session is logged and kept when the session is resumed', async () => {
  await boot([{ text: 'first' }])
  const agent = await h.root.agents.create({ cwd: h.workspace, systemPrompt: 'You are a terse reviewer in {{cwd}}.' })
  agent.followup('one')
  await agent.whenIdle()
  expect(h.root.scriptedLlm.requests[0]!.system).toBe(`You are a terse reviewer in ${h.workspace}.`)
  const id = agent.session.id
  await agent.dispose()
  const again = await bootComposition({ home: h.home, workspace: h.workspace, patch: SCRIPTED })
  try {
    again.root.scriptedLlm.enqueue({ text: 'second' })
    const resumed = await again.root.agents.resume(id)
    resumed.followup('two')
    await resumed.whenIdle()
    expect(again.root.scriptedLlm.requests[0]!.system).toBe(`You are a terse reviewer in ${h.workspace}.`)
    expect(resumed.session.all('agent/system-prompt')).toHaveLength(1)
  } finally {
    await again.dispose()
  }
})
