import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import type { ScriptedResponse } from '@dsh/llm-scripted'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'
import type {} from './index.ts'

async function inPlanMode(script: ScriptedResponse[]): Promise<Harness> {
  const h = await bootComposition({ patch: scriptedPatch(), workspaceFiles: { 'notes.md': 'the notes\n' } })
  onTestFinished(() => h.dispose())
  h.root.scriptedLlm.enqueue(...script)
  h.root.planMode.enter((await h.agent()).session, 'user:cli-flag')
  return h
}

const write = (id: string, path: string) => toolCall(id, 'write', { path, content: 'written\n' })
const exitPlan = (id = 'exit') => toolCall(id, 'exit_plan_mode', { plan: '1. write out.txt\n2. check it' })

test('plan mode refuses a write and a bash effect (the files are absent) and lets reading run; an approved exit_plan_mode restores the tools', async () => {
  const h = await inPlanMode([
    toolCall('read', 'read', { path: 'notes.md' }),
    write('write', 'planned.txt'),
    toolCall('bash', 'bash', { command: 'echo pwned > bash.txt' }),
    exitPlan(),
    write('after', 'out.txt'),
    { text: 'done' },
  ])
  const asked: string[] = []
  h.root.approval.answerer(
    h.root,
    async (request) => (asked.push(`${request.tool}: ${request.reason}`), 'allow_once'),
    { actor: 'client:sdk' },
  )
  await h.run('plan, then do it')
  expect(h.toolText('read')).toContain('the notes')
  expect(h.toolResult('write').error).toMatchObject({
    code: 'DENIED',
    message: expect.stringContaining('the session is in plan mode'),
  })
  expect(h.toolResult('bash').error).toMatchObject({
    code: 'DENIED',
    message: expect.stringContaining('bash is refused until the user approves your plan'),
  })
  expect(existsSync(join(h.workspace, 'planned.txt'))).toBe(false)
  expect(existsSync(join(h.workspace, 'bash.txt'))).toBe(false)
  expect(asked).toEqual(['exit_plan_mode: 1. write out.txt\n2. check it'])
  expect(h.toolText('exit')).toMatch(/^The user approved the plan/)
  expect(readFileSync(join(h.workspace, 'out.txt'), 'utf8')).toBe('written\n')
  const requestId = h.events('approval/asked')[0]!.data.requestId
  expect(h.events('plan/mode').map((event) => event.data)).toEqual([
    { active: true, actor: 'user:cli-flag' },
    { active: false, actor: 'client:sdk', requestId },
  ])
  // The model was told it was in plan mode, through the log.
  expect(JSON.stringify(h.root.scriptedLlm.requests[0]!.messages)).toContain('[Plan mode: only reading tools run now')
})

test('exit_plan_mode with nobody to answer stays in plan mode: a later write is still refused and absent', async () => {
  const h = await inPlanMode([exitPlan(), write('write', 'out.txt'), { text: 'ok' }])
  await h.run('try to leave')
  expect(h.toolText('exit')).toMatch(/^The plan was not approved \(nobody can answer approvals in this session\)/)
  expect(h.toolResult('write').error?.code).toBe('DENIED')
  expect(existsSync(join(h.workspace, 'out.txt'))).toBe(false)
  expect(h.root.planMode.active((await h.agent()).session)).toBe(true)
  expect(h.events('plan/mode')).toHaveLength(1)
})

test('a rejected plan stays in plan mode, and an answer from an answerer naming no actor cannot end it either', async () => {
  const h = await inPlanMode([exitPlan('rejected'), { text: 'ok' }])
  const session = (await h.agent()).session
  h.root.approval.answerer(h.root, async () => 'reject', { actor: 'user:web-tab' })
  await h.run('leave')
  expect(h.toolText('rejected')).toMatch(/^The plan was not approved/)
  expect(h.root.planMode.active(session)).toBe(true)
  h.root.approval.answerer(h.root, async () => 'allow_once')
  h.root.scriptedLlm.enqueue(exitPlan('anonymous'), { text: 'ok' })
  await h.run('again')
  expect(h.toolText('anonymous')).toMatch(/^The plan was not approved/)
  expect(h.root.planMode.active(session)).toBe(true)
  expect(h.events('plan/mode')).toHaveLength(1)
})

test('a plan/mode not of its schema is refused, naming the field, and the mode is unchanged', async () => {
  const h = await bootComposition({ patch: scriptedPatch() })
  onTestFinished(() => h.dispose())
  const session = (await h.agent()).session
  expect(() => session.append('plan/mode', { active: 'yes' as never, actor: 'user:cli-flag' })).toThrow(
    'data.active must be a boolean',
  )
  expect(() => session.append('plan/mode', { active: true, actor: 'model' as never })).toThrow(
    'data.actor must be one of ',
  )
  expect(h.root.planMode.active(session)).toBe(false)
})
