// The minimal composition (`--patch minimal`, shipped by @dsh/bundle-sdk) against the real DeepSeek adapter
// and the mock model server: the request holds exactly the prompt of the environment and the two tools.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, expect, test } from 'vitest'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import { startInitialized, type Runtime } from './test-support/runtime.ts'

let llm: MockServer | undefined
let rt: Runtime | undefined
afterEach(async () => {
  await rt?.dispose()
  await llm?.close()
})

const SYSTEM = 'You are a careful engineer. Use the two tools you have and nothing else.'

test('the minimal composition sends exactly $DSH_SYSTEM_PROMPT and the two tools, runs both, and logs $DSH_MODEL with $DSH_CONTEXT_WINDOW', async () => {
  llm = await startMockServer({ models: ['deepseek-v4-pro', 'deepseek-v4-flash'] })
  llm.enqueue(
    {
      toolCalls: [
        {
          id: 'e1',
          name: 'str_replace_editor',
          arguments: { command: 'create', path: 'notes/plan.txt', file_text: 'step one\n' },
        },
      ],
    },
    { toolCalls: [{ id: 'b1', name: 'bash', arguments: { command: 'cd notes && cat plan.txt && export MARK=kept' } }] },
    { toolCalls: [{ id: 'b2', name: 'bash', arguments: { command: 'pwd && echo "mark=$MARK"' } }] },
    { text: 'Planned.' },
  )
  rt = await startInitialized({
    llm,
    args: ['--patch', 'minimal'],
    env: { DSH_SYSTEM_PROMPT: SYSTEM, DSH_MODEL: 'deepseek-v4-pro', DSH_CONTEXT_WINDOW: '64000' },
  })
  // Instructions a full composition would send as a message of their own: the minimal one sends nothing of them.
  writeFileSync(join(rt.workspace, 'AGENTS.md'), 'Always answer in French.\n')
  const { sessionId } = (await rt.request('session/prompt', { content: 'write the plan' })).result
  await rt.waitFor(
    (m) => m.method === 'session.status' && m.params.sessionId === sessionId && m.params.status === 'idle',
    'idle',
    30_000,
  )

  expect(rt.events(sessionId, 'turn/end')[0].data.reason).toBe('completed')
  const first = llm.requests[0]!.body
  expect(first.model).toBe('deepseek-v4-pro')
  expect(first.messages[0]).toEqual({ role: 'system', content: SYSTEM })
  expect(first.messages.filter((message: any) => message.role === 'system')).toHaveLength(1)
  expect(first.messages.slice(1)).toEqual([{ role: 'user', content: 'write the plan' }])
  expect(first.tools.map((tool: any) => tool.function.name).sort()).toEqual(['bash', 'str_replace_editor'])
  expect(rt.events(sessionId, 'request/context')[0].data).toEqual({
    provider: 'deepseek',
    model: 'deepseek-v4-pro',
    contextWindow: 64_000,
  })

  expect(readFileSync(join(rt.workspace, 'notes/plan.txt'), 'utf8')).toBe('step one\n')
  const results = Object.fromEntries(
    rt.events(sessionId, 'tool/result').map((event) => [event.data.callId, event.data]),
  )
  expect(results.e1.error).toBeUndefined()
  expect(results.b1.content[0].text).toContain('step one')
  // One persistent shell: the directory and the variable of the first call are still there.
  expect(results.b2.content[0].text).toContain(join(rt.workspace, 'notes'))
  expect(results.b2.content[0].text).toContain('mark=kept')
  expect(llm.requests).toHaveLength(4)
})
