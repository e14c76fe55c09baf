import { afterAll, afterEach, beforeAll, expect, test } from 'vitest'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import { bootComposition, type Harness } from '@dsh/test-harness'

// A forked child against the mock DeepSeek server: the request bodies it records are what went on the wire.
let llm: MockServer
let h: Harness | undefined
beforeAll(async () => {
  llm = await startMockServer()
})
afterEach(async () => {
  await h?.dispose()
  h = undefined
  llm.reset()
})
afterAll(() => llm.close())

async function boot(): Promise<Harness> {
  const patch = `
- id: subagents
  name: '@dsh/subagent-fork'
- id: agents
  config: { route: { provider: deepseek, model: deepseek-v4-flash } }
- id: llm-deepseek
  config: { baseUrl: '${llm.url}' }
- id: llm-retry
  config: { maxRetries: 0 }
`
  h = await bootComposition({ patch })
  await h.root.credentials.set('DEEPSEEK_API_KEY', 'sk-test-fork-0123456789')
  return h
}

test("a forked child's first request carries the parent's history byte for byte as its prefix", async () => {
  await boot()
  llm.enqueue({ text: 'hello to you' })
  await h!.run('hello')
  llm.enqueue(
    {
      reasoning: 'I will delegate',
      toolCalls: [{ id: 't1', name: 'task', arguments: { description: 'look around', prompt: 'list the files' } }],
    },
    { text: 'the child looked' },
    { text: 'the parent is done' },
  )
  await h!.run('delegate a look')
  expect(llm.requests).toHaveLength(4)
  const [, delegating, childFirst, parentNext] = llm.requests.map((request) => request.body)
  // The parent's history up to and including the assistant message that made the call.
  const parentHistory = parentNext.messages.slice(0, delegating.messages.length + 1)
  expect(parentHistory.at(-1).tool_calls[0].id).toBe('t1')
  expect(JSON.stringify(childFirst.messages.slice(0, parentHistory.length))).toBe(JSON.stringify(parentHistory))
  expect(JSON.stringify(childFirst.tools)).toBe(JSON.stringify(delegating.tools))
  // Then the delegating call's result and the task, and nothing of the parent's later steps.
  expect(childFirst.messages.slice(parentHistory.length).map((message: { role: string }) => message.role)).toEqual([
    'tool',
    'user',
  ])
  expect(JSON.stringify(childFirst.messages.at(-1))).toContain('list the files')
  expect(h!.toolText('t1')).toContain('the child looked')
  const child = [...(await h!.agent()).children][0]!
  expect(child.session.header.parent).toBeUndefined()
  expect(child.session.last('subagent/parent')?.data).toMatchObject({
    kind: 'fork',
    parentSessionId: (await h!.agent()).session.id,
  })
  expect(h!.events('subagent/start').at(-1)?.data).toMatchObject({ kind: 'fork', childSessionId: child.session.id })
})
