import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import type {} from '@dsh/llm-scripted'
import { cwdKey } from '@dsh/session-persistence'
import { bootComposition, scriptedPatch, type Harness } from '@dsh/test-harness'
import { leaseHeldElsewhere } from '@dsh/test-harness/world'
import type {} from './index.ts'

let h: Harness
beforeAll(async () => {
  h = await bootComposition({ patch: scriptedPatch() })
})
afterAll(async () => h?.dispose())

/** A stored session of this home, closed (no process holds it): what `dsh sessions rename` meets. */
async function storedSession(prompt: string): Promise<{ id: string; log: string }> {
  const agent = await h.root.agents.create({ cwd: h.workspace })
  h.root.scriptedLlm.enqueue({ text: 'done' })
  agent.followup(prompt)
  await agent.whenIdle()
  const id = agent.session.id
  await h.root.sessions.close(id)
  return { id, log: join(h.home, 'sessions', cwdKey(h.workspace), id, 'session.jsonl') }
}

const listed = async (id: string) => (await h.root.sessions.list()).find((summary) => summary.id === id)

test('a stored session is renamed and archived through its lease; the log holds both and still resumes', async () => {
  const { id } = await storedSession('first prompt')
  await h.root.sessionAdmin.rename(id, 'A  name\nof mine')
  await h.root.sessionAdmin.setArchived(id, true)
  expect(await listed(id)).toMatchObject({ title: 'A name of mine', titleSource: 'user', archived: true, live: false })
  await h.root.sessionAdmin.setArchived(id, false)
  expect((await listed(id))?.archived).toBeUndefined()
  const { events } = await h.root.sessions.read(id)
  expect(events.filter((event) => event.type.startsWith('session/')).map((event) => [event.type, event.data])).toEqual([
    ['session/title', { title: 'A name of mine', source: 'user' }],
    ['session/archived', { archived: true }],
    ['session/archived', { archived: false }],
  ])
  const resumed = await h.root.sessions.resume(id)
  expect(resumed.events.length).toBeGreaterThanOrEqual(events.length)
  await h.root.sessions.close(id)
})

test('an empty or overlong title is refused by name and nothing is logged', async () => {
  const { id, log } = await storedSession('to be named')
  const before = readFileSync(log, 'utf8')
  await expect(h.root.sessionAdmin.rename(id, ' \n ')).rejects.toMatchObject({
    code: 'INVALID_TITLE',
    message: `the title of session ${id} cannot be empty`,
  })
  await expect(h.root.sessionAdmin.rename(id, 'x'.repeat(201))).rejects.toMatchObject({
    code: 'INVALID_TITLE',
    message: expect.stringContaining('at most 200'),
  })
  expect(readFileSync(log, 'utf8')).toBe(before)
})

test('a rename is refused while another live process holds the lease, and the log is untouched', async () => {
  const { id, log } = await storedSession('held elsewhere')
  const holder = leaseHeldElsewhere(join(log, '..'))
  const before = readFileSync(log, 'utf8')
  await expect(h.root.sessionAdmin.rename(id, 'stolen')).rejects.toMatchObject({
    code: 'SESSION_LOCKED',
    message: expect.stringContaining(`held by another dsh process (pid ${holder.pid}`),
  })
  await expect(h.root.sessionAdmin.setArchived(id, true)).rejects.toMatchObject({ code: 'SESSION_LOCKED' })
  expect(readFileSync(log, 'utf8')).toBe(before)
})

test('a damaged log is not appended to', async () => {
  const { id, log } = await storedSession('soon damaged')
  const lines = readFileSync(log, 'utf8').split('\n')
  const at = lines.findIndex((line) => line.includes('"type":"assistant/message"'))
  lines[at] = lines[at]!.replace('"content":[', '"content":"not a list","was":[')
  writeFileSync(log, lines.join('\n'))
  const before = readFileSync(log, 'utf8')
  await expect(h.root.sessionAdmin.rename(id, 'new name')).rejects.toMatchObject({ code: 'SESSION_CORRUPT' })
  expect(readFileSync(log, 'utf8')).toBe(before)
})
