import { expect, onTestFinished, test } from 'vitest'
import type { ScriptedResponse } from '@dsh/llm-scripted'
import { SessionView } from '@dsh/session-view'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'
import { tempDir } from '@dsh/test-harness/world'
import { currentTodos } from './index.ts'

async function boot(script: ScriptedResponse[], options: { home?: string; workspace?: string } = {}): Promise<Harness> {
  const h = await bootComposition({ patch: scriptedPatch(), ...options })
  onTestFinished(() => h.dispose())
  h.root.scriptedLlm.enqueue(...script)
  return h
}

const todo = (id: string, todos: unknown[]) => toolCall(id, 'todo_write', { todos })
const plan = [
  { content: 'read the failing test', status: 'completed', priority: 'high' },
  { content: 'fix the parser', status: 'in_progress', priority: 'medium' },
  { content: 'run the suite', status: 'pending', priority: 'low' },
]

test('todo_write logs the whole list as todo/updated, reads it back, and the display fold shows the latest', async () => {
  const h = await boot([
    todo('first', [{ content: 'read the failing test', status: 'in_progress', priority: 'high' }]),
    todo('second', plan),
    { text: 'on it' },
  ])
  await h.run('fix the parser')
  expect(h.events('todo/updated').map((event) => event.data)).toEqual([
    { callId: 'first', items: [{ content: 'read the failing test', status: 'in_progress', priority: 'high' }] },
    { callId: 'second', items: plan },
  ])
  expect(h.toolText('second')).toBe(
    'Todo list updated (1 pending, 1 in progress, 1 completed):\n[x] read the failing test (high)\n[~] fix the parser (medium)\n[ ] run the suite (low)',
  )
  expect(SessionView.fold(h.events()).todos).toEqual(plan)
})

test('a list with an unknown status or an empty entry is refused naming the field, and nothing is logged', async () => {
  const h = await boot([
    todo('bad', [{ content: 'x', status: 'done', priority: 'high' }]),
    todo('blank', [{ content: '   ', status: 'pending', priority: 'low' }]),
    { text: 'ok' },
  ])
  await h.run('plan')
  expect(h.toolResult('bad').error).toMatchObject({ code: 'INVALID_ARGS', message: expect.stringContaining('status') })
  expect(h.toolResult('blank').error).toMatchObject({
    code: 'INVALID_ARGS',
    message: expect.stringContaining('todos[0].content must be text that is not blank'),
  })
  expect(h.events('todo/updated')).toEqual([])
})

test('a resumed session has the list its log holds', async () => {
  const home = tempDir('dsh-todo-home-')
  const workspace = tempDir('dsh-todo-ws-')
  const first = await bootComposition({ home, workspace, patch: scriptedPatch() })
  first.root.scriptedLlm.enqueue(todo('t', plan), { text: 'planned' })
  await first.run('plan it')
  const sessionId = (await first.agent()).session.id
  await first.dispose()
  const second = await boot([], { home, workspace })
  const resumed = await second.root.agents.resume(sessionId)
  expect(currentTodos(resumed.session.events)).toEqual(plan)
  await resumed.dispose()
  // A composition without the row still opens it: the kind is ignorable.
  const bare = await bootComposition({
    home,
    workspace,
    patch: scriptedPatch({}, '- id: tool-todo\n  disabled: true\n'),
  })
  onTestFinished(() => bare.dispose())
  expect(currentTodos((await bare.root.agents.resume(sessionId)).session.events)).toEqual(plan)
})
