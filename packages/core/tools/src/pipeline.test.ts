import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, expect, test } from 'vitest'
import { bootComposition, scriptedPatch, type Harness } from '@dsh/test-harness'
import type { ScriptedResponse } from '@dsh/llm-scripted'
import { ToolError, type ToolDefinition } from './index.ts'

// The pipeline of docs/architecture.md, "Agents and the turn" in the real headless composition: the scripted model asks for calls, real tools
// run, and the session log is what the tests read.
let h: Harness
afterEach(async () => h?.dispose())

interface Span {
  name: string
  start: number
  end: number
}

/** A tool that sleeps `ms` and records when it ran, so ordering is asserted on what happened. */
function timed(name: string, spans: Span[], options: { safe: boolean; ms: number }): ToolDefinition {
  return {
    name,
    description: `Sleeps ${options.ms} ms.`,
    parameters: { type: 'object', properties: {} },
    concurrencySafe: options.safe,
    execute: async () => {
      const span = { name, start: performance.now(), end: 0 }
      await new Promise((resolve) => setTimeout(resolve, options.ms))
      span.end = performance.now()
      spans.push(span)
      return `${name} ran`
    },
  }
}

async function boot(rows = '', homeFiles: Record<string, string> = {}) {
  h = await bootComposition({ patch: scriptedPatch({ fixtureTools: true }, rows), homeFiles })
  return h
}

/** One model step asking for `calls`, then a final answer. */
function script(...calls: { id: string; name: string; arguments: unknown }[]): ScriptedResponse[] {
  return [{ toolCalls: calls }, { text: 'done' }]
}

const resultOrder = () => h.events('tool/result').map((event) => event.data.callId)
const errorOf = (callId: string) => h.toolResult(callId).error

test("results are logged in the model's order even when a later safe call finishes first", async () => {
  await boot()
  h.root.scriptedLlm.enqueue(
    ...script(
      { id: 'slow', name: 'wait', arguments: { ms: 150, label: 'slow' } },
      { id: 'fast', name: 'wait', arguments: { ms: 1, label: 'fast' } },
    ),
  )
  await h.run('go')
  expect(resultOrder()).toEqual(['slow', 'fast'])
  expect(h.toolText('slow')).toBe('slow done')
  expect(h.toolText('fast')).toBe('fast done')
  // Every call is logged, then dispatched, before any result.
  const types = h.types().filter((type) => type.startsWith('tool/'))
  expect(types).toEqual(['tool/call', 'tool/call', 'tool/dispatched', 'tool/dispatched', 'tool/result', 'tool/result'])
})

test('safe calls overlap; an unsafe call waits for everything before it and holds back everything after it', async () => {
  await boot()
  const spans: Span[] = []
  h.root.tools.register(h.root, timed('look_a', spans, { safe: true, ms: 80 }))
  h.root.tools.register(h.root, timed('look_b', spans, { safe: true, ms: 80 }))
  h.root.tools.register(h.root, timed('change', spans, { safe: false, ms: 40 }))
  h.root.tools.register(h.root, timed('look_c', spans, { safe: true, ms: 10 }))
  h.root.scriptedLlm.enqueue(
    ...script(
      toolCallOf('a', 'look_a'),
      toolCallOf('b', 'look_b'),
      toolCallOf('x', 'change'),
      toolCallOf('c', 'look_c'),
    ),
  )
  await h.run('go')
  const span = (name: string) => spans.find((entry) => entry.name === name)!
  expect(span('look_b').start).toBeLessThan(span('look_a').end)
  expect(span('change').start).toBeGreaterThanOrEqual(Math.max(span('look_a').end, span('look_b').end))
  expect(span('look_c').start).toBeGreaterThanOrEqual(span('change').end)
  expect(resultOrder()).toEqual(['a', 'b', 'x', 'c'])
})

test('no more safe calls run at once than agent.maxParallelToolCalls allows', async () => {
  await boot('', { 'settings.yaml': 'agent.maxParallelToolCalls: 2\n' })
  let running = 0
  let most = 0
  h.root.tools.register(h.root, {
    name: 'probe',
    description: 'Counts calls running at once.',
    parameters: { type: 'object', properties: {} },
    concurrencySafe: true,
    execute: async () => {
      most = Math.max(most, ++running)
      await new Promise((resolve) => setTimeout(resolve, 30))
      running--
      return 'ok'
    },
  })
  h.root.scriptedLlm.enqueue(...script(...['1', '2', '3', '4', '5'].map((id) => toolCallOf(id, 'probe'))))
  await h.run('go')
  expect(most).toBe(2)
  expect(resultOrder()).toEqual(['1', '2', '3', '4', '5'])
})

test('an unknown tool, arguments that are not an object and arguments off the schema are typed errors the model reads', async () => {
  await boot()
  h.root.scriptedLlm.enqueue(
    ...script(
      { id: 'u', name: 'nope', arguments: {} },
      { id: 's', name: 'echo', arguments: 'not json {' },
      { id: 'v', name: 'echo', arguments: { text: 3 } },
      { id: 'ok', name: 'echo', arguments: { text: 'fine' } },
    ),
  )
  await h.run('go')
  expect(errorOf('u')).toMatchObject({
    code: 'UNKNOWN_TOOL',
    message: expect.stringMatching(/There is no tool named "nope"\. Available tools: .*echo.*wait/),
  })
  expect(errorOf('s')).toMatchObject({
    code: 'INVALID_ARGS',
    message: expect.stringContaining('must be a JSON object; received unparseable text: not json {'),
  })
  expect(errorOf('v')).toMatchObject({
    code: 'INVALID_ARGS',
    message: 'Invalid arguments for echo: "text" must be string.',
  })
  expect(h.toolText('ok')).toBe('fine')
  // A refused call is never dispatched.
  expect(h.events('tool/dispatched').map((event) => event.data.callId)).toEqual(['ok'])
})

test("a ToolError keeps its code, any other throw is TOOL_FAILED, a fixture tool's fs code reaches the model", async () => {
  await boot()
  h.root.tools.register(h.root, {
    name: 'crash',
    description: 'Throws.',
    parameters: { type: 'object', properties: {} },
    execute: async () => {
      throw new Error('kaboom')
    },
  })
  h.root.tools.register(h.root, {
    name: 'refuse',
    description: 'Refuses.',
    parameters: { type: 'object', properties: {} },
    execute: async () => {
      throw new ToolError('SEARCH_FAILED', 'no more')
    },
  })
  h.root.scriptedLlm.enqueue(
    ...script(toolCallOf('c', 'crash'), toolCallOf('r', 'refuse'), {
      id: 'f',
      name: 'read_file',
      arguments: { path: 'absent.txt' },
    }),
  )
  await h.run('go')
  expect(errorOf('c')).toEqual({ code: 'TOOL_FAILED', message: 'kaboom' })
  expect(errorOf('r')).toEqual({ code: 'SEARCH_FAILED', message: 'no more' })
  expect(errorOf('f')).toEqual({ code: 'FS_NOT_FOUND', message: 'absent.txt does not exist' })
})

test('a call past its deadline is stopped as TOOL_TIMEOUT, even when its body ignores the signal', async () => {
  await boot(`- id: tools\n  config: { abortGraceMs: 50 }\n`)
  h.root.tools.register(h.root, {
    name: 'stuck',
    description: 'Never returns in time.',
    parameters: { type: 'object', properties: {} },
    timeoutMs: 60,
    execute: () => new Promise((resolve) => setTimeout(() => resolve('too late'), 120_000).unref()),
  })
  h.root.scriptedLlm.enqueue(...script(toolCallOf('s', 'stuck')))
  const started = Date.now()
  await h.run('go')
  expect(Date.now() - started).toBeLessThan(40_000) // the body would take 120 s
  expect(errorOf('s')).toMatchObject({
    code: 'TOOL_TIMEOUT',
    message: expect.stringContaining('stuck did not finish within 60 ms and was stopped.'),
  })
})

test('an over-long result is cut to its head and tail with a note saying how much', async () => {
  await boot(`- id: tools\n  config: { maxOutputChars: 100 }\n`)
  const text = `${'h'.repeat(500)}${'t'.repeat(500)}`
  h.root.scriptedLlm.enqueue(...script({ id: 'e', name: 'echo', arguments: { text } }))
  await h.run('go')
  expect(h.toolText('e')).toBe(`${'h'.repeat(60)}\n\n[… 900 characters cut …]\n\n${'t'.repeat(40)}`)
})

test('a pre-execute policy that denies a call keeps it from running; one that throws denies it too', async () => {
  await boot()
  h.root.on('tools/pre-execute', async (invocation, next) =>
    invocation.callId === 'deny'
      ? { action: 'deny', reason: 'not today' }
      : invocation.callId === 'boom'
        ? Promise.reject(new Error('policy crashed'))
        : next(),
  )
  h.root.scriptedLlm.enqueue(
    ...script(
      { id: 'deny', name: 'write_file', arguments: { path: 'a.txt', text: 'x' } },
      { id: 'boom', name: 'write_file', arguments: { path: 'b.txt', text: 'x' } },
    ),
  )
  await h.run('go')
  expect(errorOf('deny')).toEqual({ code: 'DENIED', message: 'The call was denied: not today' })
  expect(errorOf('boom')).toMatchObject({ code: 'DENIED', message: expect.stringContaining('policy crashed') })
  expect(readdirSync(h.workspace)).not.toContain('a.txt')
  expect(readdirSync(h.workspace)).not.toContain('b.txt')
})

test('a call needing approval where nobody can answer is rejected, logged, and has no effect', async () => {
  await boot()
  h.root.scriptedLlm.enqueue(
    ...script({ id: 'p', name: 'write_file', arguments: { path: 'protected/x.txt', text: 'x' } }),
  )
  await h.run('go')
  expect(errorOf('p')).toMatchObject({
    code: 'APPROVAL_REJECTED',
    message: expect.stringContaining('it writes under protected/ (protected/x.txt)'),
  })
  expect(h.events('approval/asked').map((event) => event.data)).toEqual([
    expect.objectContaining({ callId: 'p', tool: 'write_file', summary: 'write protected/x.txt' }),
  ])
  expect(readdirSync(h.workspace)).not.toContain('protected')
})

test("tool/dispatched is on disk before the tool's effect starts", async () => {
  await boot()
  let onDisk = ''
  h.root.tools.register(h.root, {
    name: 'peek',
    description: 'Reads the session log from disk.',
    parameters: { type: 'object', properties: {} },
    execute: async (_args, context) => {
      onDisk = logFilesOf(h.home, context.session.id)
        .map((file) => readFileSync(file, 'utf8'))
        .join('')
      return 'peeked'
    },
  })
  h.root.scriptedLlm.enqueue(...script(toolCallOf('k', 'peek')))
  await h.run('go')
  expect(onDisk).toMatch(/"tool\/dispatched"[^\n]*"k"|"k"[^\n]*"tool\/dispatched"/)
})

test("a tool needs an object schema, a name is registered once, and an agent's own tool shadows the global one", async () => {
  await boot()
  expect(() =>
    h.root.tools.register(h.root, {
      name: 'bad',
      description: '',
      parameters: { type: 'string' },
      execute: async () => '',
    }),
  ).toThrow('tool "bad" must declare its parameters as a JSON Schema of type "object"')
  expect(() =>
    h.root.tools.register(h.root, {
      name: 'echo',
      description: '',
      parameters: { type: 'object' },
      execute: async () => '',
    }),
  ).toThrow('tool "echo" is already registered')
  h.root.tools.register(
    h.root,
    { name: 'echo', description: 'Mine.', parameters: { type: 'object' }, execute: async () => 'agent echo' },
    { agentId: 'agent-1' },
  )
  expect(h.root.tools.resolve('echo', 'agent-1')!.tool.description).toBe('Mine.')
  expect(h.root.tools.resolve('echo', 'agent-2')!.tool.description).toBe('Returns its text.')
  const names = h.root.tools.schemas('agent-2').map((schema) => schema.name)
  expect(names).toEqual([...names].sort())
})

/** A call of a tool that takes no arguments. */
function toolCallOf(id: string, name: string) {
  return { id, name, arguments: {} }
}

/** The files under the home that hold this session's log. */
function logFilesOf(home: string, sessionId: string): string[] {
  return readdirSync(home, { recursive: true })
    .map((name) => join(home, String(name)))
    .filter((path) => path.includes(sessionId) && /\.jsonl?$/.test(path))
}

test("an approver's edited arguments are validated, logged as tool/edited, asked of the policy again, and are what runs", async () => {
  await boot()
  const replies: Record<string, unknown> = {
    edit: { answer: 'allow_once', arguments: { path: 'protected/edited.txt', text: 'edited' } },
    invalid: { answer: 'allow_once', arguments: { path: 'protected/bad.txt' } },
    denied: { answer: 'allow_once', arguments: { path: 'protected/denied.txt', text: 'x' } },
    standing: { answer: 'allow_session', arguments: { path: 'protected/standing.txt', text: 'x' } },
    refused: { answer: 'reject', message: 'use the staging folder instead' },
  }
  h.root.approval.answerer(h.root, async (request) => replies[request.callId!] as any, { actor: 'client:sdk' })
  // A deny rule no edit may get round: the edited path is refused like the model's would be.
  h.root.on('tools/pre-execute', async (invocation, next) =>
    (invocation.arguments as { path: string }).path === 'protected/denied.txt'
      ? { action: 'deny', reason: 'that path is off limits' }
      : next(),
  )
  const write = (id: string) => ({
    id,
    name: 'write_file',
    arguments: { path: `protected/${id}-model.txt`, text: 'model' },
  })
  h.root.scriptedLlm.enqueue(
    ...script(write('edit'), write('invalid'), write('denied'), write('standing'), write('refused')),
  )
  await h.run('go')
  expect(readFileSync(join(h.workspace, 'protected/edited.txt'), 'utf8')).toBe('edited')
  expect(readdirSync(join(h.workspace, 'protected'))).toEqual(['edited.txt'])
  expect(h.toolText('edit')).toContain('it ran with: {"path":"protected/edited.txt","text":"edited"}')
  expect(h.events('tool/edited').map((event) => event.data)).toEqual([
    { callId: 'edit', arguments: { path: 'protected/edited.txt', text: 'edited' } },
    { callId: 'denied', arguments: { path: 'protected/denied.txt', text: 'x' } },
  ])
  expect(
    h.events('approval/decided').map((event) => [event.data.answer, event.data.by, event.data.edited ?? false]),
  ).toEqual([
    ['allow_once', 'user', true],
    ['allow_once', 'user', true], // the edit was allowed; the schema then refused it (INVALID_ARGS before tool/edited)
    ['allow_once', 'user', true],
    ['reject', 'error', false],
    ['reject', 'user', false],
  ])
  expect(errorOf('invalid')).toMatchObject({
    code: 'INVALID_ARGS',
    message: expect.stringContaining("The approver's edited arguments for write_file are invalid"),
  })
  expect(errorOf('denied')).toEqual({ code: 'DENIED', message: 'The edited call was denied: that path is off limits' })
  expect(h.events('approval/decided')[3]!.data.note).toContain('edited arguments may only be allowed once')
  expect(errorOf('refused')).toMatchObject({
    code: 'APPROVAL_REJECTED',
    message: expect.stringContaining('Their message: use the staging folder instead'),
  })
  // The model's next request carries the edit note and the refusal message (derived from the log).
  const lastRequest = JSON.stringify(h.root.scriptedLlm.requests.at(-1))
  expect(lastRequest).toContain('it ran with:')
  expect(lastRequest).toContain('use the staging folder instead')
})

test('a cancel that comes while the policy decides stops the call before its effect, and the turn ends at once', async () => {
  await boot()
  const agent = await h.agent()
  // The policy is still deciding when the user cancels; it then allows. The write must not happen.
  h.root.on('tools/pre-execute', async (invocation, next) => (agent.cancel(), next()))
  h.root.scriptedLlm.enqueue(
    ...script(
      { id: 'late', name: 'write_file', arguments: { path: 'late.txt', text: 'x' } },
      { id: 'slow', name: 'wait', arguments: { ms: 60_000, label: 'slow' } },
    ),
  )
  agent.followup('go')
  const started = Date.now()
  expect(await agent.whenIdle()).toMatchObject({ reason: 'aborted' })
  expect(Date.now() - started).toBeLessThan(50_000) // the 60 s wait never held the turn
  expect(errorOf('late')).toMatchObject({ code: 'ABORTED_BEFORE_DISPATCH' })
  expect(readdirSync(h.workspace)).not.toContain('late.txt')
  expect(h.events('tool/dispatched')).toEqual([])
})
