// Agent presets and plan mode from the web: one real `dsh --profile web` process, the mock model, the HTTP
// API a tab uses (the picker's calls). Two sessions in the one process differ in the tools their requests carry.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { startMockServer, type MockServer, type RecordedRequest } from '@dsh/llm-mock-server'
import { api, removeHome, signIn, startWeb, tempHome, type WebProcess } from './test-support/web.ts'

let llm: MockServer
let web: WebProcess

beforeAll(async () => {
  llm = await startMockServer()
  const folders = tempHome()
  mkdirSync(join(folders.dshHome, 'presets'))
  writeFileSync(
    join(folders.dshHome, 'presets', 'reviewer.yaml'),
    'description: Reads and runs nothing\ntools:\n  allow: [read, grep]\n',
  )
  web = await startWeb({ ...folders, env: { DEEPSEEK_BASE_URL: llm.url, DEEPSEEK_API_KEY: 'test' } })
  await signIn(web)
}, 60_000)

afterAll(async () => {
  await web?.stop()
  await llm?.close()
  if (web) removeHome(web)
})

const toolNames = (request: RecordedRequest): string[] =>
  (request.body.tools ?? []).map((tool: { function: { name: string } }) => tool.function.name).sort()

/** Sends one message and waits until the session's turn has ended (the log, paged as a tab reads it). */
async function send(sessionId: string, text: string): Promise<void> {
  const before = await turnEnds(sessionId)
  await api(web, 'agent.send', { sessionId, text })
  const deadline = Date.now() + 40_000
  while ((await turnEnds(sessionId)) === before) {
    if (Date.now() > deadline) throw new Error(`no turn/end in ${sessionId}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
const turnEnds = async (sessionId: string) =>
  (await api(web, 'sessions.page', { sessionId, limit: 2000 })).events.filter(
    (event: { type: string }) => event.type === 'turn/end',
  ).length

test('two web sessions of one process, created with different agent presets, send different tool lists', async () => {
  const { agentPresets } = await api(web, 'agentPresets.list')
  expect(
    agentPresets.map(
      (preset: { name: string; source: string }) =>
        `${preset.name}:${preset.source === 'built-in' ? 'built-in' : 'file'}`,
    ),
  ).toEqual(['standard:built-in', 'explore:built-in', 'minimal:built-in', 'code:built-in', 'reviewer:file'])
  const explore = (await api(web, 'sessions.create', { cwd: web.workspace, agentPreset: 'explore' })).sessionId
  const standard = (await api(web, 'sessions.create', { cwd: web.workspace })).sessionId
  const reviewer = (await api(web, 'sessions.create', { cwd: web.workspace, agentPreset: 'reviewer' })).sessionId
  llm.reset()
  llm.enqueue({ text: 'explored' }, { text: 'worked' }, { text: 'reviewed' })
  await send(explore, 'look')
  await send(standard, 'work')
  await send(reviewer, 'review')
  const [exploreTools, standardTools, reviewerTools] = llm.requests.map(toolNames)
  expect(exploreTools).toContain('read')
  expect(
    exploreTools!.filter((name) => ['bash', 'write', 'edit', 'str_replace_editor', 'task', 'job_kill'].includes(name)),
  ).toEqual([])
  expect(standardTools).toEqual(
    expect.arrayContaining(['bash', 'write', 'edit', 'str_replace_editor', 'task', ...exploreTools!]),
  )
  expect(reviewerTools).toEqual(['grep', 'read'])
  expect((await api(web, 'sessions.open', { sessionId: explore })).agentPreset).toBe('explore')
  expect((await api(web, 'sessions.open', { sessionId: standard })).agentPreset).toBeUndefined()
})

test('an unknown agent preset is BAD_PARAMS naming the known ones, and creates no session', async () => {
  const before = (await api(web, 'sessions.list')).sessions.length
  await expect(api(web, 'sessions.create', { cwd: web.workspace, agentPreset: 'root' })).rejects.toThrow(
    'BAD_PARAMS there is no agent preset "root" (known: standard, explore, minimal, code, reviewer)',
  )
  expect((await api(web, 'sessions.list')).sessions.length).toBe(before)
})

test('plan mode from the web: a session switched into it refuses a write (the file is absent); switched off, it writes', async () => {
  const sessionId = (await api(web, 'sessions.create', { cwd: web.workspace })).sessionId
  expect(await api(web, 'agent.setPlanMode', { sessionId, active: true })).toEqual({ active: true })
  expect((await api(web, 'sessions.open', { sessionId })).planMode).toBe(true)
  llm.reset()
  llm.enqueue(
    { toolCalls: [{ id: 'w1', name: 'write', arguments: { path: 'planned.txt', content: 'x\n' } }] },
    { text: 'refused' },
  )
  await send(sessionId, 'write planned.txt')
  expect(JSON.stringify(llm.requests[1]!.body.messages.at(-1))).toContain('plan mode')
  expect(existsSync(join(web.workspace, 'planned.txt'))).toBe(false)
  expect(await api(web, 'agent.setPlanMode', { sessionId, active: false })).toEqual({ active: false })
  llm.enqueue(
    { toolCalls: [{ id: 'w2', name: 'write', arguments: { path: 'planned.txt', content: 'x\n' } }] },
    { text: 'written' },
  )
  await send(sessionId, 'now write it')
  expect(existsSync(join(web.workspace, 'planned.txt'))).toBe(true)
})

test('a session created with planMode starts in plan mode', async () => {
  const sessionId = (await api(web, 'sessions.create', { cwd: web.workspace, planMode: true })).sessionId
  expect((await api(web, 'sessions.open', { sessionId })).planMode).toBe(true)
})
