import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, test, vi } from 'vitest'
import type { Agent } from '@dsh/agent'
import type { LlmRequest } from '@dsh/llm'
import type { ScriptedResponse } from '@dsh/llm-scripted'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'
import { PRE_EXECUTE_PHASES } from '@dsh/tools'
import { turnStructureProblems } from './structure.ts'

export { turnStructureProblems }

/** The loop under test: YAML rows (a `cordis.patch.yml` fragment) that mount it, e.g. in place of the `agent-loop` row. */
export interface LoopUnderTest {
  name: string
  patch: string
}

/** Hooks the failure property throws from, and how each is called: every phase of the check before a call too. */
const HOOKS = [
  ['agent/pre-step', 'waterfall'],
  ['agent/request', 'waterfall'],
  ['agent/before-model-call', 'serial'],
  ['llm/stream', 'waterfall'],
  ['agent/request-error', 'waterfall'],
  ...PRE_EXECUTE_PHASES.map((phase) => [phase, 'waterfall'] as const),
  ['tools/execute', 'waterfall'],
  ['tools/post-execute', 'waterfall'],
  ['agent/turn-complete', 'waterfall'],
  ['agent/turn-stopping', 'serial'],
] as const

/** mulberry32: a failing run is reproduced from its seed. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const waitFor = (condition: () => boolean) => vi.waitUntil(condition, { timeout: 30_000, interval: 5 })
const sessionFile = (h: Harness, id: string) => {
  const root = join(h.home, 'sessions')
  for (const key of readdirSync(root))
    if (existsSync(join(root, key, id, 'session.jsonl'))) return join(root, key, id, 'session.jsonl')
  throw new Error(`no stored log for session ${id}`)
}
const storedTypes = (h: Harness, id: string) =>
  readFileSync(sessionFile(h, id), 'utf8')
    .split('\n')
    .filter(Boolean)
    .slice(1)
    .map((line) => JSON.parse(line) as { type: string; data: any })

/**
 * The suite every `AgentLoop` must pass (docs/architecture.md, "Agents and the turn"): the order of a turn's
 * events, tool calls through `ctx.tools`, cancellation, the three inbox modes, durable before every paid call
 * and every tool effect, the request check at the boundary, and a well-formed log whatever a listener throws.
 */
export function describeLoopConformance(loop: LoopUnderTest, options: { failureSeeds?: number } = {}): void {
  describe(`AgentLoop conformance: ${loop.name}`, () => {
    let h: Harness
    afterEach(async () => h?.dispose())

    async function boot(script: ScriptedResponse[] = []) {
      h = await bootComposition({ patch: scriptedPatch({ fixtureTools: true }, loop.patch) })
      h.root.scriptedLlm.enqueue(...script)
      return h
    }
    const structural = new Set([
      'turn/start',
      'step/start',
      'user/message',
      'assistant/message',
      'tool/call',
      'tool/result',
      'step/end',
      'turn/end',
    ])
    const shape = () => h.types().filter((type) => structural.has(type))
    const wellFormed = () => expect(turnStructureProblems(h.events())).toEqual([])

    test('a text turn logs its input, the request it answers and the answer, in order', async () => {
      await boot([{ text: 'hello back' }])
      expect(await h.run('hello')).toMatchObject({ reason: 'completed', text: 'hello back' })
      expect(shape()).toEqual(['turn/start', 'step/start', 'user/message', 'assistant/message', 'step/end', 'turn/end'])
      const types = h.types()
      expect(types.indexOf('request/header')).toBeLessThan(types.indexOf('assistant/message'))
      expect(types.indexOf('request/context')).toBeLessThan(types.indexOf('assistant/message'))
      wellFormed()
    })

    test('tool calls run through ctx.tools, their results are logged and sent back in the next step', async () => {
      await boot([toolCall('w', 'write_file', { path: 'out.txt', text: 'written' }), { text: 'done' }])
      expect((await h.run('write it')).reason).toBe('completed')
      expect(readFileSync(join(h.workspace, 'out.txt'), 'utf8')).toBe('written')
      expect(shape()).toEqual([
        'turn/start',
        'step/start',
        'user/message',
        'assistant/message',
        'tool/call',
        'tool/result',
        'step/end',
        'step/start',
        'assistant/message',
        'step/end',
        'turn/end',
      ])
      const second = h.root.scriptedLlm.requests[1] as LlmRequest
      expect(second.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool'])
      wellFormed()
    })

    test('cancel during a running tool ends the turn aborted: the running call keeps its result, the next never runs', async () => {
      await boot([
        {
          toolCalls: [
            { id: 'slow', name: 'wait', arguments: { ms: 5000, label: 'slow' } },
            { id: 'late', name: 'write_file', arguments: { path: 'late.txt', text: 'x' } },
          ],
        },
      ])
      const agent = await h.agent()
      agent.followup('go')
      await waitFor(() => h.events('tool/dispatched').length > 0)
      agent.cancel()
      const result = await agent.whenIdle()
      expect(result?.reason).toBe('aborted')
      expect(h.toolText('slow')).toBe('slow stopped')
      expect(h.toolResult('late').error?.code).toBe('ABORTED_BEFORE_DISPATCH')
      expect(existsSync(join(h.workspace, 'late.txt'))).toBe(false)
      expect(h.events('turn/end').map((event) => event.data.reason)).toEqual(['aborted'])
      wellFormed()
    })

    test('steer enters the running turn at its next step, followup waits for the next turn, inject does not wake', async () => {
      await boot([toolCall('w', 'wait', { ms: 200, label: 'w' }), { text: 'steered' }, { text: 'second turn' }])
      const agent = await h.agent()
      agent.inject('quiet context')
      expect(agent.status).toBe('idle')
      expect(h.events('turn/start')).toHaveLength(0)
      agent.followup('first')
      await waitFor(() => h.events('tool/dispatched').length > 0)
      agent.steer('change course')
      agent.followup('later')
      await waitFor(() => h.events('turn/end').length === 2)
      const users = h
        .events('user/message')
        .map((event) => [event.data.source, (event.data.content[0] as { text: string }).text])
      expect(users).toEqual([
        ['user', 'first'],
        ['inject', 'quiet context'],
        ['steer', 'change course'],
        ['user', 'later'],
      ])
      const ends = h.events('turn/end').map((event) => event.seq)
      const later = h.events('user/message').at(-1)!.seq
      expect(later).toBeGreaterThan(ends[0]!)
      wellFormed()
    })

    test('the log is durable before every model call and before every tool effect', async () => {
      await boot([toolCall('w', 'write_file', { path: 'a.txt', text: 'a' }), { text: 'done' }])
      const agent = await h.agent()
      const seenAtModel: string[][] = []
      const seenAtTool: string[][] = []
      h.root.on(
        'llm/stream',
        (request, next) => (seenAtModel.push(storedTypes(h, agent.session.id).map((event) => event.type)), next()),
      )
      h.root.on('tools/execute', async (invocation, next) => {
        seenAtTool.push(
          storedTypes(h, agent.session.id)
            .filter((event) => event.data?.callId === invocation.callId)
            .map((event) => event.type),
        )
        return next()
      })
      expect((await h.run('write')).reason).toBe('completed')
      expect(seenAtModel[0]).toEqual(
        expect.arrayContaining(['turn/start', 'user/message', 'request/header', 'request/context']),
      )
      expect(seenAtModel[1]).toContain('tool/result')
      expect(seenAtTool).toEqual([['tool/call', 'tool/dispatched']])
    })

    test('the request check holds at the boundary: a listener that adds input is refused and nothing is sent', async () => {
      await boot([{ text: 'never' }])
      h.root.on(
        'llm/stream',
        (request, next) => (
          request.messages.push({ role: 'user', content: [{ type: 'text', text: 'smuggled' }] }),
          next()
        ),
        { prepend: true },
      )
      const result = await h.run('hello')
      expect(result.error).toMatchObject({
        code: 'INVARIANT_VIOLATION',
        message: expect.stringContaining('the request has 2 messages but the log derives 1'),
      })
      expect(h.root.scriptedLlm.requests).toHaveLength(0)
      wellFormed()
    })

    test('a throwing agent/turn-stopping listener still ends the turn, with the error recorded in turn/end', async () => {
      await boot([{ text: 'fine' }])
      h.root.on('agent/turn-stopping', async () => {
        throw new Error('listener broke')
      })
      const result = await h.run('hello')
      expect(result.reason).toBe('error')
      expect(h.events('turn/end')).toHaveLength(1)
      expect(h.events('turn/end')[0]!.data.error?.message).toContain('listener broke')
      wellFormed()
    })

    test('whatever a listener throws, every turn ends once, steps nest and every call has one result', async () => {
      await boot()
      const seeds = options.failureSeeds ?? 25
      const script: ScriptedResponse[] = []
      h.root.on(
        'llm/stream',
        (_request, next) => (h.root.scriptedLlm.enqueue(script.shift() ?? { text: 'out of script' }), next()),
      )
      for (let seed = 1; seed <= seeds; seed++) {
        const rand = random(seed)
        const pick = () => Math.floor(rand() * 4)
        script.length = 0
        for (let i = 0; i < 5; i++) {
          const kind = pick()
          script.push(
            kind === 0
              ? { text: `answer ${i}` }
              : kind === 1
                ? toolCall(`e${seed}-${i}`, 'echo', { text: 'x' })
                : kind === 2
                  ? toolCall(`w${seed}-${i}`, 'write_file', { path: `f${i}.txt`, text: 'y' })
                  : {
                      toolCalls: [
                        { id: `a${seed}-${i}`, name: 'echo', arguments: { text: 'a' } },
                        { id: `b${seed}-${i}`, name: 'nope', arguments: {} },
                      ],
                    },
          )
        }
        const failAt = new Map<string, number>()
        for (const [hook] of HOOKS) if (rand() < 0.3) failAt.set(hook, 1 + Math.floor(rand() * 3))
        const calls = new Map<string, number>()
        const fire = (hook: string) => {
          calls.set(hook, (calls.get(hook) ?? 0) + 1)
          if (calls.get(hook) === failAt.get(hook)) throw new Error(`injected failure in ${hook} (seed ${seed})`)
        }
        const disposers = HOOKS.map(([hook, mode]) =>
          (h.root.on as any)(
            hook,
            mode === 'serial' ? async () => fire(hook) : (...args: any[]) => (fire(hook), args.at(-1)()),
            { prepend: true },
          ),
        )
        const agent: Agent = await h.root.agents.create({ cwd: h.workspace })
        agent.followup('one')
        agent.followup('two')
        await agent.whenIdle()
        for (const dispose of disposers) dispose()
        const events = agent.session.events
        const context = `seed ${seed}, failing at ${JSON.stringify([...failAt])}`
        expect(turnStructureProblems(events), context).toEqual([])
        expect(events.filter((event) => event.type === 'turn/start').length, context).toBe(2)
        await agent.dispose()
      }
    }, 120_000)
  })
}
