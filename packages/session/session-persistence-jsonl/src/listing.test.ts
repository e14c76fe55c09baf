import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, test, vi } from 'vitest'
import { bootComposition, type Harness } from '@dsh/test-harness'
import { leaseHeldElsewhere } from '@dsh/test-harness/world'
import {
  storedUsageSource,
  usageDigest as usageDigestOf,
  usageReport,
  USAGE_DIGEST_VERSION,
  type UsageSource,
} from '@dsh/usage-kit'

const harnesses: Harness[] = []
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.dispose()
})

/** A composition; `from` shares its home and workspace, as a second dsh process on the same machine would. */
async function boot(from?: Harness): Promise<Harness> {
  const h = await bootComposition(from ? { home: from.home, workspace: from.workspace } : {})
  harnesses.push(h)
  return h
}

/** One stored, finished session: its folder, with meta.json removed (a copied-in log, or a crash before it). */
async function storedWithoutMeta(h: Harness) {
  const session = await h.root.sessions.create({ cwd: h.workspace })
  session.append('turn/start', { turnId: 't' })
  session.append('user/message', { content: [{ type: 'text', text: 'find the flaky test' }], source: 'user' })
  session.append('turn/end', { turnId: 't', reason: 'completed' })
  await h.root.sessions.close(session.id)
  const dir = join(h.home, 'sessions', readdirSync(join(h.home, 'sessions'))[0]!, session.id)
  rmSync(join(dir, 'meta.json'))
  return { id: session.id, dir }
}

describe('listing stored sessions', () => {
  test('a log without meta.json is read once: the listing writes it back, and the next process lists without reading any log', async () => {
    const first = await boot()
    const { id, dir } = await storedWithoutMeta(first)
    const second = await boot(first)
    const listed = await second.root.sessions.list()
    expect(listed.map((s) => [s.id, s.events, s.firstPrompt, s.damaged])).toEqual([
      [id, 3, 'find the flaky test', undefined],
    ])
    const meta = JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8'))
    expect(meta.bytes).toBe(statSync(join(dir, 'session.jsonl')).size)
    // The verdict names the bytes, events, last time and event kinds it was reached for; no problem was found.
    expect(meta.checked).toEqual({ key: `${meta.bytes}:3:${meta.updatedAt}:${meta.checked.key.split(':').at(-1)}` })
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([])

    const third = await boot(first)
    const read = vi.spyOn(third.root.sessionPersistence, 'read')
    const again = await third.root.sessions.list()
    expect(read).not.toHaveBeenCalled()
    expect(again).toEqual(listed)
    expect(again[0]).not.toHaveProperty('checked') // the storage's cache, not part of what surfaces show
  })

  test('a session another live process holds keeps its meta.json: a listing neither writes one nor records a verdict', async () => {
    const first = await boot()
    const { id, dir } = await storedWithoutMeta(first)
    leaseHeldElsewhere(dir)
    const second = await boot(first)
    const listed = await second.root.sessions.list()
    expect(listed.map((s) => [s.id, s.live, s.damaged])).toEqual([[id, true, undefined]])
    expect(existsSync(join(dir, 'meta.json'))).toBe(false)
  })

  test("a usage report keeps each session's digest in meta.json: the next process reads no log, and a changed log is read again", async () => {
    const usage = { input: 100, output: 20, cacheRead: 30, cacheWrite: 0 }
    const first = await boot()
    const session = await first.root.sessions.create({ cwd: first.workspace })
    session.append('turn/start', { turnId: 't' })
    session.append('assistant/message', { content: [{ type: 'text', text: 'one' }], usage, finish: 'stop' })
    session.append('turn/end', { turnId: 't', reason: 'completed' })
    await first.root.sessions.close(session.id)
    type Derive = Parameters<NonNullable<UsageSource['digest']>>[1]
    /** As `dsh usage` reads them (packages/surfaces/headless/src/usage.ts); `derive` stands in for the digest, which runs only on a log read. */
    const report = async (h: Harness, derive: Derive, since?: number) => {
      const source = storedUsageSource(h.root.sessions, h.root.sessionPersistence)
      return usageReport(
        { ...source, digest: (id) => source.digest!(id, derive) },
        { by: 'model', ...(since !== undefined ? { since } : {}) },
        {},
      )
    }

    const second = await boot(first)
    expect((await report(second, usageDigestOf)).total).toMatchObject({
      requests: 1,
      input: 100,
      output: 20,
      cacheRead: 30,
    })
    const dir = join(second.home, 'sessions', readdirSync(join(second.home, 'sessions'))[0]!, session.id)
    const meta = JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8'))
    expect(meta.derived.usage.key).toBe(`${USAGE_DIGEST_VERSION}:${meta.bytes}:${meta.events}:${meta.updatedAt}`)

    const third = await boot(first)
    const read = vi.spyOn(third.root.sessionPersistence, 'read')
    const parsed = vi.spyOn(third.root.sessions, 'read')
    const unread = vi.fn(usageDigestOf)
    expect((await report(third, unread)).total).toMatchObject({ requests: 1, input: 100, output: 20, cacheRead: 30 })
    expect((await report(third, unread, 0)).total.requests).toBe(1) // a since before every request needs no log either
    expect(unread).not.toHaveBeenCalled()
    expect(read).not.toHaveBeenCalled()
    expect(parsed).not.toHaveBeenCalled()
    expect((await third.root.sessions.list())[0]).not.toHaveProperty('derived') // the storage's cache, not shown

    // The session goes on in another process: its log changed, so its digest is made again from the log.
    const resumed = await third.root.sessions.resume(session.id)
    resumed.append('turn/start', { turnId: 'u' })
    resumed.append('assistant/message', { content: [{ type: 'text', text: 'two' }], usage, finish: 'stop' })
    resumed.append('turn/end', { turnId: 'u', reason: 'completed' })
    await third.root.sessions.close(session.id)
    const fourth = await boot(first)
    const derive = vi.fn(usageDigestOf)
    expect((await report(fourth, derive)).total).toMatchObject({ requests: 2, input: 200 })
    expect(derive).toHaveBeenCalledTimes(1)
  })

  test("a subagent's child is listed with its parent and task description, also from a meta.json an older fold wrote", async () => {
    const first = await boot()
    const child = await first.root.sessions.create({ cwd: first.workspace })
    child.append('subagent/parent' as any, {
      parentSessionId: 'parent-1',
      kind: 'spawn',
      agentType: 'general',
      description: 'Count the files',
      depth: 1,
    })
    child.append('user/message', { content: [{ type: 'text', text: 'the hidden instructions' }], source: 'user' })
    expect((await first.root.sessions.list()).find((s) => s.id === child.id)?.subagentOf).toEqual({
      id: 'parent-1',
      description: 'Count the files',
    })
    await first.root.sessions.close(child.id)
    // meta.json as a fold before `subagentOf` left it: the same bytes, no fold version, no link.
    const dir = join(first.home, 'sessions', readdirSync(join(first.home, 'sessions'))[0]!, child.id)
    const { fold, subagentOf, ...older } = JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8'))
    expect([fold, subagentOf?.description]).toEqual([2, 'Count the files'])
    writeFileSync(join(dir, 'meta.json'), JSON.stringify(older))
    const second = await boot(first)
    const listed = (await second.root.sessions.list()).find((s) => s.id === child.id)
    expect([listed?.subagentOf?.description, listed?.firstPrompt]).toEqual([
      'Count the files',
      'the hidden instructions',
    ])
    expect(JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8')).fold).toBe(2)
  })
})
