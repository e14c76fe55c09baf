import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import type { Agent } from '@dsh/agent'
import type {} from '@dsh/agent-presets'
import type {} from '@dsh/approval'
import type {} from '@dsh/llm-scripted'
import { SessionView } from '@dsh/session-view'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'
import { eventually } from '@dsh/test-harness/world'

// Code mode on the headless profile's real composition, the model scripted: programs whose calls are real
// tool calls (files on disk, approvals asked, the fence refusing), logged as children of their run_code call.

let h: Harness
const files: Record<string, string> = {}
for (let index = 0; index < 20; index++) files[`src/f${index}.txt`] = `file ${index}\nvalue = old${index}\n`

beforeAll(async () => {
  h = await bootComposition({ patch: scriptedPatch(), workspaceFiles: files })
}, 60_000)
afterAll(() => h?.dispose())

async function codeAgent(): Promise<Agent> {
  const agent = await h.root.agents.create({ cwd: h.workspace })
  h.root.agentPresets.choose(agent.session, 'code', 'client:sdk')
  return agent
}

async function turn(agent: Agent, ...script: Parameters<Harness['root']['scriptedLlm']['enqueue']>) {
  h.root.scriptedLlm.enqueue(...script)
  agent.followup('go')
  return (await agent.whenIdle())!
}

const events = (agent: Agent, type: string) => agent.session.events.filter((event) => event.type === type) as any[]
const resultOf = (agent: Agent, callId: string) =>
  events(agent, 'tool/result').find((e) => e.data.callId === callId)!.data
const textOf = (agent: Agent, callId: string) =>
  resultOf(agent, callId)
    .content.map((b: any) => b.text)
    .join('')
const runCode = (id: string, code: string) => toolCall(id, 'run_code', { code })

test('one program reads 20 files and edits 5: the edits are on disk and 25 child calls are logged, each with its result', async () => {
  const agent = await codeAgent()
  const code = `
    const texts: string[] = await Promise.all(Array.from({ length: 20 }, (_, i) => read({ path: 'src/f' + i + '.txt' })))
    let edited = 0
    for (let i = 0; i < 5; i++) {
      await edit({ path: 'src/f' + i + '.txt', old_string: 'value = old' + i, new_string: 'value = new' + i })
      edited++
    }
    console.log('read', texts.length)
    return { edited, sawOld3: texts[3].includes('old3') }`
  await turn(agent, runCode('p1', code), { text: 'done' })

  for (let index = 0; index < 20; index++)
    expect(readFileSync(join(h.workspace, `src/f${index}.txt`), 'utf8')).toBe(
      `file ${index}\nvalue = ${index < 5 ? 'new' : 'old'}${index}\n`,
    )
  const children = events(agent, 'tool/call').filter((event) => event.data.parentCallId === 'p1')
  expect(children).toHaveLength(25)
  expect(children.filter((event) => event.data.name === 'read')).toHaveLength(20)
  expect(children.filter((event) => event.data.name === 'edit')).toHaveLength(5)
  for (const child of children) {
    const result = resultOf(agent, child.data.callId)
    expect(result.error, child.data.callId).toBeUndefined()
    expect(events(agent, 'tool/dispatched').some((event) => event.data.callId === child.data.callId)).toBe(true)
  }
  expect(textOf(agent, 'p1')).toMatch(/^read 20\nReturned: \{"edited":5,"sawOld3":true\}\n\(25 tool calls, \d+ ms\)$/)
  // Every child's result is logged before the program's.
  const programResult = events(agent, 'tool/result').find((event) => event.data.callId === 'p1')!.seq
  expect(children.every((child) => resultOf(agent, child.data.callId) && child.seq < programResult)).toBe(true)

  // The model saw run_code and the direct tools only, with the program's functions declared in the description,
  // and its next request carries the program's result but none of the children's.
  const [first, second] = h.root.scriptedLlm.requests.slice(-2)
  const names = first!.tools!.map((tool) => tool.name)
  expect(names).toContain('run_code')
  expect(names).not.toContain('read')
  expect(names).not.toContain('edit')
  expect(names.every((name) => ['run_code', 'todo_write', 'skill', 'task', 'exit_plan_mode'].includes(name))).toBe(true)
  const description = first!.tools!.find((tool) => tool.name === 'run_code')!.description
  expect(description).toContain('declare function read(args: {')
  expect(description).toMatch(/declare function edit\(args: \{[^}]*old_string: string/s)
  expect(description).not.toContain('declare function run_code')
  const results = second!.messages.flatMap((message) =>
    message.role === 'tool' ? message.content.map((block: any) => block.callId) : [],
  )
  expect(results).toEqual(['p1'])

  // session-view marks each child with its program, after the program's card, each with its own result.
  const view = SessionView.fold(agent.session.events)
  const cards = view.items.filter((item) => item.kind === 'tool')
  const program = cards.findIndex((item) => item.kind === 'tool' && item.callId === 'p1')
  const nested = cards.filter((item) => item.kind === 'tool' && item.parentCallId === 'p1')
  expect(nested).toHaveLength(25)
  expect(nested.every((item) => item.kind === 'tool' && item.status === 'done' && cards.indexOf(item) > program)).toBe(
    true,
  )
})

test('in the code preset a tool reached only from programs, called directly, is an unknown tool', async () => {
  const agent = await codeAgent()
  await turn(agent, toolCall('r1', 'read', { path: 'src/f1.txt' }), { text: 'ok' })
  expect(resultOf(agent, 'r1').error.code).toBe('UNKNOWN_TOOL')
  expect(events(agent, 'tool/dispatched').some((event) => event.data.callId === 'r1')).toBe(false)
})

test('a call needing approval inside a program asks like a direct call, and a rejection is an error the program catches', async () => {
  const agent = await codeAgent()
  const asked: { callId?: string; tool: string }[] = []
  h.root.approval.answerer(
    h.root,
    async (request) => (asked.push({ callId: request.callId, tool: request.tool }), 'reject'),
    {
      actor: 'client:sdk',
    },
  )
  const code = `
    try {
      await bash({ command: 'echo hi > unconfined.txt', sandbox: false, justification: 'the test asks' })
      return 'ran'
    } catch (error) {
      if (error instanceof ToolCallError) return error.tool + ' ' + error.code
      throw error
    }`
  await turn(agent, runCode('a1', code), { text: 'done' })
  expect(asked).toEqual([{ callId: 'a1.1', tool: 'bash' }])
  expect(events(agent, 'approval/asked').map((event) => event.data.callId)).toEqual(['a1.1'])
  expect(resultOf(agent, 'a1.1').error.code).toBe('APPROVAL_REJECTED')
  expect(textOf(agent, 'a1')).toMatch(/^Returned: "bash APPROVAL_REJECTED"/)
  expect(existsSync(join(h.workspace, 'unconfined.txt'))).toBe(false)
})

test('a write outside the workspace from a program is refused exactly as the same direct write', async () => {
  const outside = join(h.home, 'outside', 'pwned.txt')
  const direct = await h.root.agents.create({ cwd: h.workspace })
  await turn(direct, toolCall('d1', 'write', { path: outside, content: 'x' }), { text: 'ok' })
  const agent = await codeAgent()
  await turn(
    agent,
    runCode(
      'w1',
      `try { await write({ path: ${JSON.stringify(outside)}, content: 'x' }) } catch (error) { return (error as ToolCallError).code }`,
    ),
    { text: 'ok' },
  )
  expect(existsSync(outside)).toBe(false)
  const refusedDirectly = resultOf(direct, 'd1')
  const refusedInProgram = resultOf(agent, 'w1.1')
  expect(refusedDirectly.error.code).not.toBeUndefined()
  expect(refusedInProgram.error).toEqual(refusedDirectly.error)
  expect(textOf(agent, 'w1')).toContain(`Returned: ${JSON.stringify(refusedDirectly.error.code)}`)
})

test('cancel in the middle of a program ends its worker and the turn ends aborted', async () => {
  const agent = await codeAgent()
  h.root.scriptedLlm.enqueue(runCode('c1', `await read({ path: 'src/f9.txt' }); while (true) {}`), { text: 'never' })
  agent.followup('go')
  expect(
    await eventually(() => events(agent, 'tool/result').some((event) => event.data.callId === 'c1.1'), 20_000),
  ).toBe(true)
  agent.cancel()
  const result = await agent.whenIdle()
  expect(result?.reason ?? events(agent, 'turn/end').at(-1).data.reason).toBe('aborted')
  expect(resultOf(agent, 'c1').error.code).toBe('ABORTED')
  // The loop never yields: only terminating its worker could have ended it.
  expect(textOf(agent, 'c1')).toMatch(/cancelled/)
})
