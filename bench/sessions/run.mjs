// Session search costs (docs/architecture.md, "Finding sessions"): building the FTS5 index of 1,000 logs
// written by the real JSONL persistence, search latency, and what indexing adds to each appended event.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { cwdKey } from '@dsh/session-persistence'
import { bootComposition } from '@dsh/test-harness'
import { storedUsageSource, usageReport } from '@dsh/usage-kit'
import { ms } from '../stats.mjs'

const SESSIONS = 1000
// 6 events a turn: ~1,000 events a session, ~1M in all (the size issue 17 names). DSH_BENCH_SESSION_TURNS
// makes a quicker, smaller run while working on the benchmark itself.
const TURNS = Number(process.env.DSH_BENCH_SESSION_TURNS ?? 167)
const QUERIES = 200
const APPENDS = 50_000
const now = () => performance.now()
const text = (value) => [{ type: 'text', text: value }]
const noLive = '- id: session-query\n  config: { debounceMs: 3600000 }\n'

/** A deterministic vocabulary with a long tail, so postings look like real text rather than one word. */
function words(seed) {
  let state = seed
  const next = () => (state = (state * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff
  const vocabulary = Array.from({ length: 5000 }, (_, i) => `w${i.toString(36)}x${(i * 7919).toString(36)}`)
  const say = (n) => Array.from({ length: n }, () => vocabulary[Math.floor(next() ** 2 * vocabulary.length)]).join(' ')
  /** A word from the rarest fifth of the vocabulary (what a person usually looks for: a name, an error). */
  say.rare = () => vocabulary[vocabulary.length - 1 - Math.floor(next() * (vocabulary.length / 5))]
  return say
}

function quantile(samples, q) {
  const sorted = [...samples].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
}

/**
 * The fixture: JSONL logs written directly, line for line what the JSONL persistence writes (a header line,
 * then one `{type, seq, time, data}` per line), one file write per session. Appending a million events
 * through the session service validates and batches each one and took ~10 minutes; this takes seconds. Two
 * logs are then loaded through the real session service, which checks every event against its kind, so a
 * fixture that drifts from the log format fails here instead of measuring something else.
 */
function writeLogs(h, say) {
  const folder = join(h.home, 'sessions', cwdKey(h.workspace))
  const started = Date.now() - SESSIONS * TURNS * 6
  let time = started
  let events = 0
  const ids = []
  for (let s = 0; s < SESSIONS; s++) {
    const id = `bench${String(s).padStart(5, '0')}-${((s * 2654435761) >>> 0).toString(16).padStart(8, '0')}`
    const lines = [JSON.stringify({ format: 'dsh-session', version: 1, id, cwd: h.workspace, createdAt: time })]
    let seq = 0
    const add = (type, data) => lines.push(JSON.stringify({ type, seq: seq++, time: time++, data }))
    for (let t = 0; t < TURNS; t++) {
      add('turn/start', { turnId: `t${t}` })
      add('user/message', { content: text(say(12)), source: 'user' })
      add('tool/call', { callId: `c${t}`, name: 'bash', arguments: { command: `grep -rn ${say(1)} src/${say(1)}.ts` } })
      add('tool/result', { callId: `c${t}`, content: text(say(60)) })
      add('assistant/message', {
        content: text(say(30)),
        usage: { input: 100, output: 30, cacheRead: 0, cacheWrite: 0 },
        finish: 'stop',
      })
      add('turn/end', { turnId: `t${t}`, reason: 'completed' })
    }
    mkdirSync(join(folder, id), { recursive: true, mode: 0o700 })
    writeFileSync(join(folder, id, 'session.jsonl'), lines.join('\n') + '\n', { mode: 0o600 })
    events += seq
    ids.push(id)
  }
  return { events, ids }
}

async function appendCost(patch) {
  const h = await bootComposition({ patch })
  const session = await h.root.sessions.create({ cwd: h.workspace })
  const started = now()
  for (let i = 0; i < APPENDS; i++)
    session.append('user/message', { content: text(`message number ${i} with a little text in it`), source: 'user' })
  await session.flush()
  const elapsed = now() - started
  await h.root.sessions.close(session.id)
  const caughtUp = now()
  await h.root.sessionQuery?.sync()
  const indexing = now() - caughtUp
  await h.dispose()
  return { perEvent: (elapsed * 1000) / APPENDS, indexingPerEvent: (indexing * 1000) / APPENDS }
}

export default async function run() {
  const say = words(42)
  const h = await bootComposition({ patch: noLive })
  const writing = now()
  const { events, ids } = writeLogs(h, say)
  const writeMs = now() - writing
  for (const id of [ids[0], ids.at(-1)]) {
    const { events: loaded } = await h.root.sessions.read(id)
    if (loaded.length !== TURNS * 6)
      throw new Error(`bench fixture: session ${id} loaded ${loaded.length} events, wrote ${TURNS * 6}`)
  }
  const built = now()
  const report = await h.root.sessionQuery.reindex()
  const buildMs = now() - built
  const idle = now()
  await h.root.sessionQuery.sync()
  const syncMs = now() - idle
  // `dsh sessions list` (and the web sidebar) in a new process: the first one reads and checks every log (the
  // fixture has no meta.json yet, as after an import); it records its verdicts, so a later process reads none.
  const listing = async () => {
    const process = await bootComposition({ home: h.home, workspace: h.workspace, patch: noLive })
    const started = now()
    const listed = await process.root.sessions.list()
    const elapsed = now() - started
    if (listed.length !== SESSIONS || listed.some((summary) => summary.damaged))
      throw new Error(`bench: listed ${listed.length} sessions, some damaged`)
    return { process, elapsed }
  }
  const firstList = await listing()
  await firstList.process.dispose()
  const laterList = await listing()
  // `dsh usage --json --all-workspaces` and the web usage page, as they read sessions (storedUsageSource): the
  // first report reads every log and keeps each one's usage digest in meta.json; a later process reads none.
  const usageReportMs = async (process) => {
    const started = now()
    const report = await usageReport(
      storedUsageSource(process.root.sessions, process.root.sessionPersistence),
      { by: 'model' },
      process.root.usagePrices.table(),
    )
    return { report, elapsed: now() - started }
  }
  const firstUsage = await usageReportMs(laterList.process)
  await laterList.process.dispose()
  const usageProcess = await bootComposition({ home: h.home, workspace: h.workspace, patch: noLive })
  const laterUsage = await usageReportMs(usageProcess)
  await usageProcess.dispose()
  const usage = laterUsage.report
  if (usage.total.requests !== firstUsage.report.total.requests)
    throw new Error('bench: the later usage report counted other requests')
  // `dsh sessions search` looks in the current workspace (every fixture session is in it); `--all-workspaces`
  // asks the FTS5 table alone.
  const common = []
  const rare = []
  const everywhere = []
  let hits = 0
  for (let i = 0; i < QUERIES; i++) {
    const rareQuery = i % 2 === 1
    const query = rareQuery ? say.rare() : i % 4 ? say(1) : say(2)
    const started = now()
    hits += (await h.root.sessionQuery.search(query, { limit: 20, cwd: h.workspace })).length
    ;(rareQuery ? rare : common).push(now() - started)
    if (rareQuery) continue
    const startedEverywhere = now()
    await h.root.sessionQuery.search(query, { limit: 20 })
    everywhere.push(now() - startedEverywhere)
  }
  // The query alone: a composition that trusts the index (live indexing keeps its own sessions current).
  const trusting = await bootComposition({
    home: h.home,
    workspace: h.workspace,
    patch: '- id: session-query\n  config: { syncBeforeSearch: false }\n',
  })
  const queryOnly = []
  for (let i = 0; i < QUERIES; i++) {
    const query = i % 2 ? say.rare() : say(1)
    const started = now()
    await trusting.root.sessionQuery.search(query, { limit: 20 })
    queryOnly.push(now() - started)
  }
  await trusting.dispose()
  await h.dispose()
  await appendCost(noLive) // warm-up
  const without = await appendCost('- id: session-query\n  disabled: true\n')
  const withIndex = await appendCost('- id: session-query\n  config: { debounceMs: 1000 }\n')
  return [
    '## Session search (bench/sessions)',
    '',
    `${SESSIONS.toLocaleString('en')} sessions, ${events.toLocaleString('en')} events (${report.events.toLocaleString('en')} indexed texts) in JSONL logs written as the persistence writes them (${ms(writeMs)} to write the fixture); SQLite FTS5 through better-sqlite3.`,
    '',
    '| measurement | result | target |',
    '|---|---|---|',
    `| index build from nothing (\`dsh sessions reindex\`) | ${ms(buildMs)} | — |`,
    `| catch-up pass with nothing changed (runs before every search) | ${ms(syncMs)} | — |`,
    `| \`dsh sessions list\`, first process to list them (every log read and checked; meta.json and verdicts written) | ${ms(firstList.elapsed)} | — |`,
    `| \`dsh sessions list\`, a later process (recorded verdicts reused: no log read) | ${ms(laterList.elapsed)} | < 1000 ms |`,
    `| usage report over every session (\`dsh usage --json --all-workspaces\`, web usage page; ${usage.total.requests.toLocaleString('en')} requests), first process (every log read; digests written to meta.json) | ${ms(firstUsage.elapsed)} | — |`,
    `| usage report, a later process (digests reused: no log read) | ${ms(laterUsage.elapsed)} | ≤ 500 ms |`,
    `| search in the workspace (\`dsh sessions search\`), ${common.length} frequent one- and two-word queries, limit 20: p50 / p95 | ${ms(quantile(common, 0.5))} / ${ms(quantile(common, 0.95))} | < 100 ms p95 |`,
    `| search in the workspace, ${rare.length} rare-word queries, limit 20: p50 / p95 | ${ms(quantile(rare, 0.5))} / ${ms(quantile(rare, 0.95))} | < 50 ms p95 |`,
    `| search in every workspace (\`--all-workspaces\`), the same ${everywhere.length} frequent queries: p50 / p95 | ${ms(quantile(everywhere, 0.5))} / ${ms(quantile(everywhere, 0.95))} | < 100 ms p95 |`,
    `| the query alone (\`syncBeforeSearch: false\`), ${QUERIES} mixed queries: p50 / p95 | ${ms(quantile(queryOnly, 0.5))} / ${ms(quantile(queryOnly, 0.95))} | — |`,
    `| append + flush per event, index row disabled | ${without.perEvent.toFixed(2)} µs | — |`,
    `| append + flush per event, index row mounted (live indexing on) | ${withIndex.perEvent.toFixed(2)} µs | ≈ disabled |`,
    `| indexing per appended event, later and off the turn (catch-up of ${APPENDS.toLocaleString('en')} events) | ${withIndex.indexingPerEvent.toFixed(2)} µs | — |`,
    '',
    `Search times include the catch-up pass (one stat per log, the second row); the query alone is the row below them. The fixture's words follow a steep power law (its most common word is in about a quarter of all events): a query matching more than \`rankedMatches\` (20,000) events lists its newest matches instead of ranking every one by bm25. ${hits.toLocaleString('en')} hits were returned in all. The append path only records which session moved (the two append rows differ by noise); the reading happens after \`debounceMs\` of quiet. \`dsh sessions list\` and \`dsh usage\` read no index: the first listing reads and checks every log once, and the first usage report reads every log in scope once; later ones read only the logs that changed.`,
  ].join('\n')
}
