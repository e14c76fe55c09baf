import type { Context } from '@dsh/cordis'
import type { Session } from '@dsh/session'
import { afterEach, expect, test } from 'vitest'
import { bootComposition, scriptedPatch, type Harness } from '@dsh/test-harness'
import type { Answerer, ApprovalAnswer } from './index.ts'

// Approvals in the headless composition: fail closed whatever goes wrong, and every request and decision logged.
let h: Harness
afterEach(async () => h?.dispose())

const ask = {
  agentId: 'agent-1',
  callId: 'call-1',
  tool: 'bash',
  summary: 'bash: rm -rf build',
  reason: 'it runs outside the sandbox',
}

async function boot(rows = ''): Promise<Session> {
  h = await bootComposition({ patch: scriptedPatch({}, rows) })
  return h.root.sessions.create({ cwd: h.workspace })
}

/** Registers `answer` from a plugin of its own (so disposing it removes the answerer); records what it saw. */
async function answerer(answer: Answerer) {
  const seen: { signal: AbortSignal }[] = []
  const fiber = h.root.plugin({
    name: 'answerer',
    inject: ['approval'],
    apply: (ctx: Context) =>
      ctx.approval.answerer(ctx, (request, signal) => (seen.push({ signal }), answer(request, signal))),
  })
  await fiber
  return { seen, fiber }
}

const logged = (session: Session) =>
  session.events
    .filter((event) => event.type.startsWith('approval/'))
    .map((event) => ({ type: event.type, data: event.data as Record<string, unknown> }))
const never = () => new AbortController().signal

test('with nobody to answer, a request is rejected, and both the request and the decision are logged', async () => {
  const session = await boot()
  expect(h.root.approval.canAsk).toBe(false)
  const decision = await h.root.approval.request(session, ask, never())
  expect(decision).toEqual({ answer: 'reject', by: 'no-answerer', note: 'nobody can answer approvals in this session' })
  const [asked, decided] = logged(session)
  expect(asked).toEqual({ type: 'approval/asked', data: { requestId: expect.any(String), ...ask } })
  expect(decided).toEqual({
    type: 'approval/decided',
    data: {
      requestId: asked!.data.requestId,
      answer: 'reject',
      by: 'no-answerer',
      note: 'nobody can answer approvals in this session',
    },
  })
})

test("a person's answer decides, and the most recent answerer is the one asked", async () => {
  const session = await boot()
  const first = await answerer(async () => 'reject')
  const second = await answerer(async () => 'allow_once')
  expect(await h.root.approval.request(session, ask, never())).toEqual({ answer: 'allow_once', by: 'user' })
  expect(first.seen).toHaveLength(0)
  await second.fiber.dispose()
  expect(await h.root.approval.request(session, ask, never())).toEqual({ answer: 'reject', by: 'user' })
  expect(first.seen).toHaveLength(1)
})

test('an answer that is not allow_once is a rejection', async () => {
  const session = await boot()
  await answerer(async () => 'yes please' as ApprovalAnswer)
  expect(await h.root.approval.request(session, ask, never())).toEqual({ answer: 'reject', by: 'user' })
})

test('the "never" policy rejects without asking anyone; a policy is logged once and a bad one is refused', async () => {
  const session = await boot()
  const { seen } = await answerer(async () => 'allow_once')
  h.root.approval.setPolicy(session, 'never', 'user:cli-flag')
  h.root.approval.setPolicy(session, 'never', 'user:cli-flag')
  expect(session.events.filter((event) => event.type === 'approval/policy')).toHaveLength(1)
  expect(h.root.approval.policy(session)).toBe('never')
  expect(await h.root.approval.request(session, ask, never())).toMatchObject({ answer: 'reject', by: 'policy' })
  expect(seen).toHaveLength(0)
  expect(() => session.append('approval/policy', { policy: 'always' as never, actor: 'user:cli-flag' })).toThrow(
    'data.policy must be one of ask, never',
  )
})

test('an answerer that throws is a logged rejection naming the error', async () => {
  const session = await boot()
  await answerer(async () => {
    throw new Error('the tab went away')
  })
  expect(await h.root.approval.request(session, ask, never())).toEqual({
    answer: 'reject',
    by: 'error',
    note: 'the tab went away',
  })
  expect(logged(session).at(-1)!.data).toMatchObject({ by: 'error', note: 'the tab went away' })
})

test('an unanswered request is rejected after timeoutMs, and the answerer is told to stop asking', async () => {
  const session = await boot(`- id: approval\n  config: { timeoutMs: 60 }\n`)
  const { seen } = await answerer(() => new Promise(() => {}))
  const started = Date.now()
  expect(await h.root.approval.request(session, ask, never())).toEqual({
    answer: 'reject',
    by: 'timeout',
    note: 'no answer within 60 ms',
  })
  expect(Date.now() - started).toBeLessThan(30_000) // without the timeout it would never end
  expect(seen[0]!.signal.aborted).toBe(true)
})

test('a cancelled turn rejects the request it is waiting on, and one already cancelled asks nobody', async () => {
  const session = await boot()
  const { seen } = await answerer(() => new Promise(() => {}))
  const turn = new AbortController()
  const pending = h.root.approval.request(session, ask, turn.signal)
  await new Promise((resolve) => setTimeout(resolve, 20))
  turn.abort()
  expect(await pending).toEqual({ answer: 'reject', by: 'cancelled' })
  expect(seen[0]!.signal.aborted).toBe(true)
  expect(await h.root.approval.request(session, ask, turn.signal)).toEqual({ answer: 'reject', by: 'cancelled' })
  expect(seen).toHaveLength(1)
})

test('a router shows the answerer another session and summary, or refuses; the log keeps the request as made', async () => {
  const session = await boot()
  const seen: { sessionId: string; summary: string }[] = []
  await answerer(
    async (request) => (seen.push({ sessionId: request.sessionId, summary: request.summary }), 'allow_once'),
  )
  const fiber = h.root.plugin({
    name: 'router',
    inject: ['approval'],
    apply: (ctx: Context) =>
      ctx.approval.useRouter(ctx, (request) =>
        request.tool === 'refused'
          ? 'routed nowhere'
          : { ...request, sessionId: 'the-parent', summary: `child: ${request.summary}` },
      ),
  })
  await fiber
  expect(await h.root.approval.request(session, ask, never())).toMatchObject({ answer: 'allow_once', by: 'user' })
  expect(seen).toEqual([{ sessionId: 'the-parent', summary: 'child: bash: rm -rf build' }])
  expect(logged(session)[0]!.data).toMatchObject({ summary: 'bash: rm -rf build' })
  expect(await h.root.approval.request(session, { ...ask, tool: 'refused' }, never())).toEqual({
    answer: 'reject',
    by: 'policy',
    note: 'routed nowhere',
  })
  expect(seen).toHaveLength(1)
  await fiber.dispose()
  await h.root.approval.request(session, ask, never())
  expect(seen.at(-1)).toEqual({ sessionId: session.id, summary: 'bash: rm -rf build' })
})

test('an answerer that sends an edited rule past the web check: one that does not cover the call is a rejection and keeps nothing; one that covers it is kept', async () => {
  const session = await boot()
  const replies = [
    { answer: 'allow_session' as const, rule: 'bash(git push *)' },
    { answer: 'allow_session' as const, rule: 'bash(git *)' },
  ]
  await h.root.plugin({
    name: 'editor',
    inject: ['approval'],
    apply: (ctx: Context) => ctx.approval.answerer(ctx, async () => replies.shift()!, { actor: 'client:sdk' }),
  })
  const commit = {
    ...ask,
    summary: 'bash: git commit -m x',
    rule: 'bash(git commit *)',
    arguments: { command: 'git commit -m x' },
  }
  const refused = await h.root.approval.request(session, commit, never())
  expect(refused).toMatchObject({
    answer: 'reject',
    by: 'error',
    note: expect.stringContaining('does not cover this call'),
  })
  expect(session.all('grant/added')).toEqual([])
  const kept = await h.root.approval.request(session, commit, never())
  expect(kept).toMatchObject({ answer: 'allow_session', rule: 'bash(git *)' })
  expect(session.all('grant/added').map((event) => event.data.rule)).toEqual(['bash(git *)'])
  expect(
    logged(session)
      .filter((event) => event.type === 'approval/decided')
      .map((event) => event.data.rule),
  ).toEqual([undefined, 'bash(git *)'])
})
