// History can always be relieved (issue #27 part 8), on a real composition: the real DeepSeek adapter
// against the mock server, real JSONL storage. A log written by an older dsh holds one `write` whose
// `content` is 8 MiB; the provider's real window is 65,536 tokens. The session resumes and continues: the
// call's arguments are shortened in the request (a stub with size and sha256, `tool/arguments-pruned`),
// every request that goes out fits, and the log on disk still holds the 8 MiB whole.
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import type { Harness } from '@dsh/test-harness'
import { useMockProvider } from './test-support/deepseek-mock.ts'
import type { RecordedRequest } from '@dsh/llm-mock-server'
import type {} from '@dsh/agent'
import type {} from '@dsh/compaction'
import type {} from '@dsh/tool-result-pruner'

const REAL_WINDOW = 65_536
const PROVIDER_CHARS_PER_TOKEN = 2
const BIG = 'a line of a generated file, repeated until it is 8 MiB\n'
  .repeat(Math.ceil((8 * 1024 * 1024) / 55))
  .slice(0, 8 * 1024 * 1024)
/** 4 KiB of the content as it appears inside JSON (a request body, a log line). */
const NEEDLE = JSON.stringify(BIG.slice(0, 4096)).slice(1, -1)
const providerTokens = (request: RecordedRequest) =>
  Math.ceil(JSON.stringify(request.body.messages).length / PROVIDER_CHARS_PER_TOKEN)

const mock = useMockProvider(REAL_WINDOW)
let h: Harness | undefined

const boot = mock.boot

/** What an older dsh wrote: a turn whose one step wrote an 8 MiB file, the call's arguments whole. */
async function craftedSession(harness: Harness): Promise<string> {
  const session = await harness.root.sessions.create({ cwd: harness.workspace })
  const call = { callId: 'call_big', name: 'write', arguments: { path: 'big.txt', content: BIG } }
  session.append('turn/start', { turnId: 't0' })
  session.append('user/message', { content: [{ type: 'text', text: 'generate big.txt' }], source: 'user' })
  session.append('step/start', { turnId: 't0', step: 0 })
  session.append('assistant/message', {
    content: [
      { type: 'text', text: 'Writing it.' },
      { type: 'tool-call', ...call },
    ],
    usage: { input: 40, output: 2_100_000, cacheRead: 0, cacheWrite: 0 },
    finish: 'tool-calls',
  })
  session.append('tool/call', call)
  session.append('tool/result', {
    callId: call.callId,
    content: [{ type: 'text', text: `Created big.txt (${BIG.length} bytes, 152521 lines).` }],
  })
  session.append('step/end', { turnId: 't0', step: 0, finish: 'tool-calls' })
  session.append('step/start', { turnId: 't0', step: 1 })
  session.append('assistant/message', {
    content: [{ type: 'text', text: 'Done.' }],
    usage: { input: 2_100_060, output: 2, cacheRead: 0, cacheWrite: 0 },
    finish: 'stop',
  })
  session.append('step/end', { turnId: 't0', step: 1, finish: 'stop' })
  session.append('turn/end', { turnId: 't0', reason: 'completed' })
  await session.flush()
  await harness.root.sessions.close(session.id)
  return session.id
}

test('a resumed session whose log holds an 8 MiB write argument continues: the request fits, the log keeps it whole', async () => {
  h = await boot()
  const id = await craftedSession(h)
  mock.llm.respondWith((request) =>
    providerTokens(request) > REAL_WINDOW ? { contextOverflow: true } : { text: 'continued' },
  )
  const agent = await h.root.agents.resume(id)
  agent.followup('now summarize what you did')
  const result = await agent.whenIdle()
  expect(result).toMatchObject({ reason: 'completed', text: 'continued' })

  // Every request that went out after the first refusal fits the provider's window, without the content.
  for (const request of mock.llm.requests) {
    expect(providerTokens(request)).toBeLessThanOrEqual(REAL_WINDOW)
    expect(JSON.stringify(request.body)).not.toContain(NEEDLE)
  }
  expect(agent.session.events.filter((event) => event.type === 'context/relief-failed')).toHaveLength(0)

  // The log on disk keeps the 8 MiB whole.
  await agent.session.flush()
  const stored = await h.root.sessions.read(id)
  const call = stored.events[3]!.data as { content: { type: string; arguments?: { content?: string } }[] }
  expect(call.content[1]!.arguments!.content).toBe(BIG)
  expect(readFileSync(agentLogPath(h, id), 'utf8')).toContain(NEEDLE)
})

test('a write of 8 MiB is refused before it runs with a message the model can act on, and its arguments leave the request', async () => {
  h = await boot()
  mock.llm.respondWith((request) => {
    if (providerTokens(request) > REAL_WINDOW) return { contextOverflow: true }
    const last = request.body.messages.at(-1)
    return last.role === 'user'
      ? { toolCalls: [{ name: 'write', arguments: { path: 'big.txt', content: BIG } }] }
      : { text: 'I will write it in parts.' }
  })
  const result = await h.run('generate big.txt')
  expect(result).toMatchObject({ reason: 'completed', text: 'I will write it in parts.' })
  // The call did not run: no file, and the model was told why and what to do instead.
  expect(existsSync(join(h.workspace, 'big.txt'))).toBe(false)
  const [call] = h.events('tool/call')
  const refusal = h.toolResult(call!.data.callId)
  expect(refusal.error).toMatchObject({
    code: 'INVALID_ARGS',
    message:
      'write: content is 8.0 MiB (8.1 MiB of arguments as JSON), over tools.maxArgumentBytes (1.0 MiB); the call did not run. Send less in one call: split the content over several calls under that size (write a first part, then add the rest with edit), or produce it with a command or script.',
  })
  // The arguments stay in the log whole, and in the request as a stub with their size and hash.
  const [pruned] = h.events('tool/arguments-pruned')
  expect(pruned!.data).toMatchObject({
    callId: call!.data.callId,
    arguments: {
      path: 'big.txt',
      content: `[left out of the history: 8.0 MiB (${BIG.length} bytes), sha256 ${sha256(BIG)}]`,
    },
  })
  const logged = h.events('assistant/message').find((event) => event.seq === pruned!.data.seq)!
  expect(logged.data.content.find((block) => block.type === 'tool-call')).toMatchObject({ arguments: { content: BIG } })
  const last = mock.llm.requests.at(-1)!
  expect(providerTokens(last)).toBeLessThanOrEqual(REAL_WINDOW)
  expect(JSON.stringify(last.body)).not.toContain(NEEDLE)
  expect(JSON.stringify(last.body)).toContain(sha256(BIG))
  expect(h.events('context/relief-failed')).toHaveLength(0)
})

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

function agentLogPath(harness: Harness, id: string): string {
  const found = execFileSync('find', [harness.home, '-path', `*${id}*`, '-name', 'session.jsonl'], {
    encoding: 'utf8',
  }).trim()
  if (!found) throw new Error(`no session.jsonl for ${id} under ${harness.home}`)
  return found.split('\n')[0]!
}
