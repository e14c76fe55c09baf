// Search on real SQLite over logs written by the real JSONL persistence (docs/architecture.md, "Finding sessions").
import { readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, test } from 'vitest'
import { bootComposition, type Harness } from '@dsh/test-harness'
import type { Session } from '@dsh/session'
import type {} from '@dsh/session-query'

let h: Harness | undefined
afterEach(async () => {
  await h?.dispose()
  h = undefined
})

const text = (value: string) => [{ type: 'text' as const, text: value }]

/** Config for the index row; live indexing is off unless a test wants it (its timer would race the test). */
const patch = (config: Record<string, unknown> = {}) =>
  `- id: session-query\n  config: ${JSON.stringify({ debounceMs: 3_600_000, ...config })}\n`

/** One turn like a real one: a prompt, a `bash` call and its output, an answer. */
function writeTurn(session: Session, prompt: string, command: string, output: string): { resultSeq: number } {
  session.append('turn/start', { turnId: 't' })
  session.append('user/message', { content: text(prompt), source: 'user' })
  session.append('tool/call', { callId: 'c1', name: 'bash', arguments: { command } })
  const result = session.append('tool/result', { callId: 'c1', content: text(output) })
  session.append('user/message', { content: text('# AGENTS.md instructions everywhere'), source: 'instructions' })
  session.append('assistant/message', {
    content: text(`ran ${command.split(' ')[0]}`),
    usage: { input: 10, output: 2, cacheRead: 0, cacheWrite: 0 },
    finish: 'stop',
  })
  session.append('turn/end', { turnId: 't', reason: 'completed' })
  return { resultSeq: result.seq }
}

async function makeSession(cwd: string, prompt: string, command: string, output: string) {
  const session = await h!.root.sessions.create({ cwd })
  const { resultSeq } = writeTurn(session, prompt, command, output)
  await h!.root.sessions.close(session.id)
  return { id: session.id, resultSeq }
}

function logOf(id: string): string {
  const root = join(h!.home, 'sessions')
  for (const key of readdirSync(root)) {
    const file = join(root, key, id, 'session.jsonl')
    try {
      readFileSync(file)
      return file
    } catch {}
  }
  throw new Error(`no log for ${id}`)
}

describe('sessions search on SQLite FTS5', () => {
  test('1,000 sessions: a word from a tool output 900 sessions back is found with its seq', async () => {
    h = await bootComposition({ patch: patch() })
    let target: { id: string; resultSeq: number } | undefined
    for (let i = 0; i < 1000; i++) {
      const output = i === 99 ? `compiled 12 files\nwarning: zanzibarquux is deprecated` : `compiled ${i} files\nok`
      const made = await makeSession(
        h.workspace,
        `task number ${i}: build the project`,
        `npm run build -- --filter pkg${i}`,
        output,
      )
      if (i === 99) target = made
    }
    const report = await h.root.sessionQuery.sync()
    expect(report).toMatchObject({ indexed: 1000, removed: 0 })
    const hits = await h.root.sessionQuery.search('zanzibarquux', { limit: 10 })
    expect(hits).toHaveLength(1)
    expect(hits[0]).toMatchObject({
      sessionId: target!.id,
      seq: target!.resultSeq,
      source: 'tool-result',
      firstPrompt: 'task number 99: build the project',
      matches: 1,
      cwd: h.workspace,
    })
    const { text: snippet, highlights } = hits[0]!.snippet
    expect(highlights.map(({ start, end }) => snippet.slice(start, end))).toEqual(['zanzibarquux'])
    // The instructions files repeat in every session and are not what anybody searches for.
    expect(await h.root.sessionQuery.search('AGENTS.md instructions', { limit: 10 })).toEqual([])
    // A word every session has ranks them all, capped by the limit, one hit per session.
    const common = await h.root.sessionQuery.search('compiled', { limit: 25 })
    expect(common).toHaveLength(25)
    expect(new Set(common.map((hit) => hit.sessionId)).size).toBe(25)
    // Nothing changed: a second pass reads no log.
    expect(await h.root.sessionQuery.sync()).toEqual({ indexed: 0, caughtUp: 0, removed: 0, events: 0 })
  }, 120_000)

  test('commands and file paths from tool calls are found, a path as one phrase', async () => {
    h = await bootComposition({ patch: patch() })
    const made = await makeSession(h.workspace, 'tidy up', 'rm -rf build && cat src/query/index.ts', 'removed')
    await makeSession(h.workspace, 'other', 'ls src', 'index ts query')
    const hits = await h.root.sessionQuery.search('src/query/index.ts', { limit: 10 })
    expect(hits.map((hit) => [hit.sessionId, hit.source, hit.seq])).toEqual([
      [made.id, 'tool-call', made.resultSeq - 1],
    ])
    expect((await h.root.sessionQuery.search('rm -rf', { limit: 10 })).map((hit) => hit.sessionId)).toEqual([made.id])
  })

  test('a query with FTS syntax characters is text, never an error', async () => {
    h = await bootComposition({ patch: patch() })
    const made = await makeSession(h.workspace, 'build it', 'npm run build', 'path:src built "quoted" a-b')
    for (const query of [
      '"',
      '"unbalanced',
      'build*',
      '-rf',
      '(build',
      'NEAR(a b)',
      'build AND OR NOT',
      '^build',
      '*',
      '---',
      '',
      '   ',
    ]) {
      await expect(h.root.sessionQuery.search(query, { limit: 5 }), query).resolves.toBeInstanceOf(Array)
    }
    for (const query of ['path:src', '"quoted"', 'a-b', 'build*']) {
      expect(
        (await h.root.sessionQuery.search(query, { limit: 5 })).map((hit) => hit.sessionId),
        query,
      ).toEqual([made.id])
    }
  })

  test('words match as prefixes, all of them required, case and accents ignored', async () => {
    h = await bootComposition({ patch: patch() })
    const made = await makeSession(
      h.workspace,
      'Déployer le serveur',
      'kubectl apply',
      'deployment.apps/web configured',
    )
    const ids = async (query: string) =>
      (await h!.root.sessionQuery.search(query, { limit: 5 })).map((hit) => hit.sessionId)
    expect(await ids('deploy')).toEqual([made.id])
    expect(await ids('deployer SERVEUR')).toEqual([made.id])
    expect(await ids('deploy nowhere')).toEqual([])
  })

  test('a snippet marks the whole word where the event has it, and the longer word where only a prefix matched', async () => {
    h = await bootComposition({ patch: patch() })
    await makeSession(h.workspace, 'check the deploy script', 'ls', 'nothing here')
    await makeSession(h.workspace, 'look at the deployment', 'ls', 'nothing here')
    const marked = async (query: string) =>
      (await h!.root.sessionQuery.search(query, { limit: 5 }))
        .map((hit) => hit.snippet.highlights.map(({ start, end }) => hit.snippet.text.slice(start, end)).join(','))
        .sort()
    // Each hit's snippet is its own event's text (a bound rowid once matched nothing, and every hit showed the first).
    const hits = await h.root.sessionQuery.search('deploy', { limit: 5 })
    expect(
      hits.map((hit) => [hit.snippet.text, hit.firstPrompt]).filter(([snippet, prompt]) => snippet !== prompt),
    ).toEqual([])
    expect(await marked('deploy')).toEqual(['deploy', 'deployment'])
    expect(await marked('deploym')).toEqual(['deployment'])
  })

  test('bm25 ranks the matches of a query; past rankedMatches the newest matches are listed instead', async () => {
    const sessionsWith = async () => {
      // The older session says the word three times in a short text (bm25's favourite); the newer ones once.
      const older = await makeSession(h!.workspace, 'quokka quokka quokka', 'ls', 'x')
      const newer: string[] = []
      for (let i = 0; i < 3; i++)
        newer.push(
          (
            await makeSession(
              h!.workspace,
              `a long prompt that mentions a quokka only once among many other words ${i}`,
              'ls',
              'x',
            )
          ).id,
        )
      return { older: older.id, newest: newer.at(-1)! }
    }
    h = await bootComposition({ patch: patch() })
    const ranked = await sessionsWith()
    expect((await h.root.sessionQuery.search('quokka', { limit: 4 }))[0]!.sessionId).toBe(ranked.older)
    await h.dispose()

    h = await bootComposition({ patch: patch({ rankedMatches: 3 }) })
    const listed = await sessionsWith()
    // Logs written within one tick of the file clock share a time: the session ids (creation time first) order them.
    const tick = new Date()
    for (const id of readdirSync(dirname(dirname(logOf(listed.older))))) utimesSync(logOf(id), tick, tick)
    const hits = await h.root.sessionQuery.search('quokka', { limit: 4, cwd: h.workspace })
    expect(hits.map((hit) => hit.sessionId)[0]).toBe(listed.newest)
    expect(hits.map((hit) => hit.sessionId).at(-1)).toBe(listed.older)
    expect((await h.root.sessionQuery.search('quokka', { limit: 4 }))[0]!.sessionId).toBe(listed.newest)
  })

  test("an edit behind the index's back is re-indexed, a grown log is read from where the index stopped", async () => {
    h = await bootComposition({ patch: patch() })
    const made = await makeSession(h.workspace, 'first words', 'echo hi', 'original marmalade output')
    await h.root.sessionQuery.sync()
    // Same length, different words: neither the size nor an append explains it.
    const file = logOf(made.id)
    writeFileSync(file, readFileSync(file, 'utf8').replace('marmalade', 'quicksand'))
    expect(await h.root.sessionQuery.sync()).toMatchObject({ indexed: 1, caughtUp: 0 })
    expect(await h.root.sessionQuery.search('marmalade', { limit: 5 })).toEqual([])
    expect((await h.root.sessionQuery.search('quicksand', { limit: 5 })).map((hit) => hit.sessionId)).toEqual([made.id])
    // A resumed session appends: only its new events are read.
    const session = await h.root.sessions.resume(made.id)
    writeTurn(session, 'second words', 'echo again', 'later tangerine output')
    await h.root.sessions.close(session.id)
    expect(await h.root.sessionQuery.sync()).toMatchObject({ indexed: 0, caughtUp: 1, events: 4 })
    expect((await h.root.sessionQuery.search('tangerine', { limit: 5 }))[0]).toMatchObject({
      sessionId: made.id,
      firstPrompt: 'first words',
    })
    expect(await h.root.sessionQuery.search('quicksand', { limit: 5 })).toHaveLength(1)
    // Shorter than what was indexed: read again from the start.
    const lines = readFileSync(file, 'utf8').split('\n')
    writeFileSync(file, lines.slice(0, 4).join('\n') + '\n')
    expect(await h.root.sessionQuery.sync()).toMatchObject({ indexed: 1 })
    expect(await h.root.sessionQuery.search('tangerine', { limit: 5 })).toEqual([])
  })

  test('a log that grew but was also changed before the indexed end is read again from the start', async () => {
    h = await bootComposition({ patch: patch() })
    const made = await makeSession(h.workspace, 'first words', 'echo hi', 'original marmalade output')
    await h.root.sessionQuery.sync()
    const file = logOf(made.id)
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n')
    const last = JSON.parse(lines.at(-1)!)
    const appended = JSON.stringify({
      ...last,
      seq: last.seq + 1,
      type: 'user/message',
      data: { content: text('appended later'), source: 'user' },
    })
    writeFileSync(file, [...lines, appended].join('\n').replace('marmalade', 'quicksand') + '\n')
    expect(await h.root.sessionQuery.sync()).toMatchObject({ indexed: 1, caughtUp: 0 })
    expect(await h.root.sessionQuery.search('marmalade', { limit: 5 })).toEqual([])
    expect(await h.root.sessionQuery.search('quicksand appended', { limit: 5 })).toEqual([])
    expect(await h.root.sessionQuery.search('quicksand', { limit: 5 })).toHaveLength(1)
    expect(await h.root.sessionQuery.search('appended later', { limit: 5 })).toHaveLength(1)
  })

  test('a deleted session disappears from results and from the index file', async () => {
    h = await bootComposition({ patch: patch() })
    const gone = await makeSession(h.workspace, 'doomed', 'echo', 'pomegranate')
    const kept = await makeSession(h.workspace, 'kept', 'echo', 'pomegranate too')
    await h.root.sessionQuery.sync()
    rmSync(join(logOf(gone.id), '..'), { recursive: true })
    expect((await h.root.sessionQuery.search('pomegranate', { limit: 5 })).map((hit) => hit.sessionId)).toEqual([
      kept.id,
    ])
    const db = new Database(join(h.home, 'index', 'sessions.sqlite'), { readonly: true })
    try {
      expect(db.prepare('SELECT count(*) AS n FROM docs WHERE session = ?').get(gone.id)).toEqual({ n: 0 })
      expect(db.prepare('SELECT count(*) AS n FROM logs WHERE session = ?').get(gone.id)).toEqual({ n: 0 })
    } finally {
      db.close()
    }
  })

  test('cwd keeps the hits of one workspace; reindex rebuilds from the logs alone', async () => {
    h = await bootComposition({ patch: patch() })
    const here = await makeSession(h.workspace, 'here', 'echo', 'nectarine')
    const there = await makeSession('/elsewhere/project', 'there', 'echo', 'nectarine')
    expect(
      (await h.root.sessionQuery.search('nectarine', { limit: 5, cwd: h.workspace })).map((hit) => hit.sessionId),
    ).toEqual([here.id])
    expect((await h.root.sessionQuery.search('nectarine', { limit: 5 })).map((hit) => hit.sessionId).sort()).toEqual(
      [here.id, there.id].sort(),
    )
    expect(await h.root.sessionQuery.reindex()).toMatchObject({ indexed: 2, removed: 0 })
    expect(await h.root.sessionQuery.search('nectarine', { limit: 5 })).toHaveLength(2)
  })

  test('a live session is indexed after a quiet spell, without a search catching it up', async () => {
    h = await bootComposition({ patch: patch({ debounceMs: 20, syncBeforeSearch: false }) })
    const session = await h.root.sessions.create({ cwd: h.workspace })
    writeTurn(session, 'live one', 'echo', 'live kumquat output')
    await session.flush()
    await expect
      .poll(async () => (await h!.root.sessionQuery.search('kumquat', { limit: 5 })).map((hit) => hit.sessionId), {
        timeout: 30_000,
      })
      .toEqual([session.id])
  })
})
