import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import type { Agent } from '@dsh/agent'
import type {} from '@dsh/llm-scripted'
import { cwdKey } from '@dsh/session-persistence'
import type {} from '@dsh/session-query'
import type {} from '@dsh/spill'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'
import { leaseHeldElsewhere, pngOfColour } from '@dsh/test-harness/world'
import type {} from './index.ts'

// Deleting on the real headless composition: jsonl logs, attachments, spills, the SQLite index and the
// `task` subagent tool. Only the model is scripted.
let h: Harness
beforeAll(async () => {
  h = await bootComposition({
    patch: scriptedPatch({
      config: '{ models: [{ id: vision, contextWindow: 100000, images: true }] }',
      model: 'vision',
    }),
  })
})
afterAll(async () => h?.dispose())

/** A real 2×2 PNG of one colour. */
const png = (rgb: [number, number, number]) => pngOfColour(2, 2, rgb)

const folderOf = (id: string) => join(h.home, 'sessions', cwdKey(h.workspace), id)
const listed = async (id: string) => (await h.root.sessions.list()).some((summary) => summary.id === id)
const found = async (word: string) =>
  (await h.root.sessionQuery.search(word, { limit: 50 })).map((hit) => hit.sessionId)

/** The session of the parent's first subagent, as its log names it. */
const childOf = (parent: Agent) =>
  (
    parent.session.events.find((event) => (event.type as string) === 'subagent/start')!.data as {
      childSessionId: string
    }
  ).childSessionId

/** A parent agent that delegated once through `task` (its child ran one turn), and the child's session id. */
async function parentWithChild(): Promise<{ parent: Agent; childId: string }> {
  const parent = await h.root.agents.create({ cwd: h.workspace })
  h.root.scriptedLlm.enqueue(
    toolCall('t1', 'task', { description: 'look', prompt: 'say hi' }),
    { text: 'hi from the child' },
    { text: 'the child said hi' },
  )
  parent.followup('delegate')
  await parent.whenIdle()
  return { parent, childId: childOf(parent) }
}

/** A stored session (closed) that said `word`, with one spilled output. */
async function storedSession(word: string): Promise<Agent> {
  const agent = await h.root.agents.create({ cwd: h.workspace })
  h.root.scriptedLlm.enqueue({ text: `noted ${word}` })
  agent.followup(`remember ${word}`)
  await agent.whenIdle()
  await h.root.spillStore.write({ sessionId: agent.session.id, callId: 'c1', tool: 'bash', text: `${word} output` })
  await agent.dispose()
  return agent
}

test('a deleted session leaves no folder, no spill, no listing and no search hit; another session stays', async () => {
  const doomed = (await storedSession('zanzibarite')).session.id
  const kept = (await storedSession('quokkastone')).session.id
  const spill = h.root.spillStore.readableDir(doomed)!
  expect(existsSync(join(spill, 'c1.txt'))).toBe(true)
  expect(await found('zanzibarite')).toEqual([doomed])

  expect(await h.root.sessionAdmin.delete(doomed)).toEqual([doomed])

  expect(existsSync(folderOf(doomed))).toBe(false)
  expect(existsSync(spill)).toBe(false)
  expect(await listed(doomed)).toBe(false)
  expect(await found('zanzibarite')).toEqual([])
  expect(await found('quokkastone')).toEqual([kept])
  expect(existsSync(join(folderOf(kept), 'session.jsonl'))).toBe(true)
  await expect(h.root.sessions.read(doomed)).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' })
})

test("an image shared with a fork is kept in the fork's folder when the original is deleted", async () => {
  const picture = png([10, 200, 30])
  const sha = createHash('sha256').update(picture).digest('hex')
  const original = await h.root.agents.create({ cwd: h.workspace })
  h.root.scriptedLlm.enqueue({ text: 'green' }, { text: 'still green' })
  original.followup([{ type: 'image', mediaType: 'image/png', data: picture.toString('base64') }])
  await original.whenIdle()
  const fork = await h.root.agents.fork(original.session.id, original.session.length - 1)
  fork.followup('and now?')
  await fork.whenIdle()
  expect(fork.session.all('turn/end').map((event) => event.data.reason)).toEqual(['completed', 'completed'])
  const shared = join(folderOf(fork.session.id), 'attachments', `${sha}.png`)
  expect(existsSync(join(folderOf(original.session.id), 'attachments', `${sha}.png`))).toBe(true)
  await fork.dispose()

  expect(await h.root.sessionAdmin.delete(original.session.id)).toEqual([original.session.id])

  expect(existsSync(folderOf(original.session.id))).toBe(false)
  expect(readFileSync(shared)).toEqual(picture)
  const resumed = await h.root.agents.resume(fork.session.id)
  expect(resumed.session.header.parent?.id).toBe(original.session.id)
  await resumed.dispose()
})

test('a subagent child is deleted with its parent', async () => {
  const { parent, childId } = await parentWithChild()
  expect(existsSync(join(folderOf(childId), 'session.jsonl'))).toBe(true)

  // The parent's idle agent (and its child's) in this process is let go first.
  expect(await h.root.sessionAdmin.delete(parent.session.id)).toEqual([parent.session.id, childId])

  expect(existsSync(folderOf(parent.session.id))).toBe(false)
  expect(existsSync(folderOf(childId))).toBe(false)
  expect(await listed(childId)).toBe(false)
  expect(parent.status).toBe('disposed')
})

test('a log whose subagent/start names an unrelated session does not take it along: a child must name its parent back', async () => {
  const victim = await h.root.agents.create({ cwd: h.workspace })
  await victim.session.flush()
  const forger = await h.root.agents.create({ cwd: h.workspace })
  // What an imported or hand-edited log could hold: a start event naming someone else's session.
  forger.session.append('subagent/start', {
    childSessionId: victim.session.id,
    kind: 'spawn',
    agentType: 'general',
    description: 'not mine',
    ceiling: 'workspace-write',
  })
  await forger.session.flush()
  expect(await h.root.sessionAdmin.delete(forger.session.id)).toEqual([forger.session.id])
  expect(existsSync(join(folderOf(victim.session.id), 'session.jsonl'))).toBe(true)
  expect(await listed(victim.session.id)).toBe(true)
})

test('a session running a turn here is not deleted', async () => {
  const agent = await h.root.agents.create({ cwd: h.workspace })
  h.root.scriptedLlm.enqueue({ text: 'thinking', hang: true })
  agent.followup('take your time')
  await expect.poll(() => agent.running).toBe(true)
  await expect(h.root.sessionAdmin.delete(agent.session.id)).rejects.toMatchObject({ code: 'SESSION_RUNNING' })
  agent.cancel('the test is done')
  await agent.whenIdle()
  expect(existsSync(join(folderOf(agent.session.id), 'session.jsonl'))).toBe(true)
  await agent.dispose()
})

test('a session another process holds is not deleted, nor are any of its children', async () => {
  const { parent, childId } = await parentWithChild()
  await parent.dispose()
  // The child is held: the parent, whose lease is free, must not go either.
  const holder = leaseHeldElsewhere(folderOf(childId))
  await expect(h.root.sessionAdmin.delete(parent.session.id)).rejects.toMatchObject({
    code: 'SESSION_LOCKED',
    message: expect.stringContaining(`pid ${holder.pid}`),
  })
  expect(existsSync(join(folderOf(parent.session.id), 'session.jsonl'))).toBe(true)
  expect(existsSync(join(folderOf(childId), 'session.jsonl'))).toBe(true)
  expect(existsSync(join(folderOf(parent.session.id), 'lease'))).toBe(false) // the lease taken for the attempt is given back
})

test('an id that is a path deletes nothing, inside or outside the sessions folder', async () => {
  const decoyDir = join(h.home, 'decoy')
  mkdirSync(decoyDir, { recursive: true })
  writeFileSync(join(decoyDir, 'session.jsonl'), '{}\n')
  const victim = (await storedSession('victimword')).session.id
  for (const id of [
    '../decoy',
    '../../decoy',
    decoyDir,
    `${cwdKey(h.workspace)}/${victim}`,
    `${victim}/..`,
    '.',
    '..',
    '',
  ]) {
    await expect(h.root.sessionAdmin.delete(id)).rejects.toMatchObject({ code: 'INVALID_ID' })
  }
  expect(existsSync(join(decoyDir, 'session.jsonl'))).toBe(true)
  expect(existsSync(join(folderOf(victim), 'session.jsonl'))).toBe(true)
  await expect(h.root.sessionAdmin.delete('no-such-session')).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' })
})

test('a session whose log no longer loads can still be deleted', async () => {
  const id = (await storedSession('brokenword')).session.id
  const log = join(folderOf(id), 'session.jsonl')
  writeFileSync(log, readFileSync(log, 'utf8').replace('"type":"user/message"', '"type":"no/such-kind"'))
  await expect(h.root.sessions.read(id)).rejects.toMatchObject({ code: 'UNKNOWN_KIND' })
  expect(await h.root.sessionAdmin.delete(id)).toEqual([id])
  expect(existsSync(folderOf(id))).toBe(false)
})
