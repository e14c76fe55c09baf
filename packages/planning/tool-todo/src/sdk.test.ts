// The todo list through the TypeScript SDK driving the real runtime (`dsh --profile sdk` from dist).
import { afterAll, beforeAll, expect, test } from 'vitest'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import { Harness, SessionView } from '@dsh/sdk'
import { tempDir } from '@dsh/test-harness/world'

let llm: MockServer
beforeAll(async () => {
  llm = await startMockServer()
})
afterAll(() => llm.close())

test('an SDK client receives todo/updated as a session event and its SessionView shows the list', async () => {
  const harness = await Harness.start({
    cwd: tempDir('dsh-todo-ws-'),
    env: { DSH_HOME: tempDir('dsh-todo-home-'), DEEPSEEK_BASE_URL: llm.url, DEEPSEEK_API_KEY: 'test' },
  })
  try {
    const items = [{ content: 'write the parser', status: 'in_progress', priority: 'high' }]
    llm.enqueue({ toolCalls: [{ id: 't', name: 'todo_write', arguments: { todos: items } }] }, { text: 'planned' })
    const session = await harness.session()
    const result = await session.run('plan the work')
    expect(result.events.find((event) => event.type === ('todo/updated' as string))).toMatchObject({
      data: { callId: 't', items },
    })
    expect(SessionView.fold(result.events).todos).toEqual(items)
  } finally {
    await harness.close()
  }
})
