import { afterEach, expect, test } from 'vitest'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'
import type { Agent, AgentStatus } from './index.ts'

// Agents in the headless composition: the real loop, the scripted model, the fixture tools, the session log.
let h: Harness
afterEach(async () => h?.dispose())

async function boot() {
  h = await bootComposition({ patch: scriptedPatch({ fixtureTools: true }) })
  return h
}

const userTexts = (agent: Agent) =>
  agent.session.events
    .filter((event) => event.type === 'user/message')
    .map((event) => (event.data as { content: { text?: string }[] }).content.map((block) => block.text).join(''))
const turnEnds = (agent: Agent) =>
  agent.session.events
    .filter((event) => event.type === 'turn/end')
    .map((event) => (event.data as { reason: string }).reason)
/** A model step that keeps the turn running for `ms` (the fixture `wait` tool). */
const busy = (ms: number) => toolCall('w', 'wait', { ms, label: 'busy' })

test('follow-ups sent while a turn runs become turns of their own, in order, and whenIdle waits for them all', async () => {
  await boot()
  h.root.scriptedLlm.enqueue(busy(150), { text: 'one' }, { text: 'two' }, { text: 'three' })
  const agent = await h.agent()
  const statuses: AgentStatus[] = []
  h.root.on('agent/status', (who, status) => void (who === agent && statuses.push(status)))
  agent.followup('first')
  expect(agent.running).toBe(true)
  agent.followup('second')
  agent.followup('third')
  const result = await agent.whenIdle()
  expect(result).toMatchObject({ reason: 'completed', text: 'three' })
  expect(userTexts(agent)).toEqual(['first', 'second', 'third'])
  expect(turnEnds(agent)).toEqual(['completed', 'completed', 'completed'])
  expect(statuses).toEqual(['running', 'idle'])
})

test('a steer while a turn runs joins that turn; while idle it starts one', async () => {
  await boot()
  h.root.scriptedLlm.enqueue(busy(150), { text: 'steered' }, { text: 'fresh' })
  const agent = await h.agent()
  agent.followup('do the thing')
  agent.steer('use tabs')
  await agent.whenIdle()
  expect(agent.session.events.filter((event) => event.type === 'turn/start')).toHaveLength(1)
  expect(userTexts(agent)).toEqual(['do the thing', 'use tabs'])
  agent.steer('again')
  expect(agent.running).toBe(true)
  expect(await agent.whenIdle()).toMatchObject({ text: 'fresh' })
  expect(turnEnds(agent)).toHaveLength(2)
})

test('injected context waits, without waking the agent, for the next step', async () => {
  await boot()
  h.root.scriptedLlm.enqueue({ text: 'seen' })
  const agent = await h.agent()
  agent.inject('the build is red')
  expect(agent.running).toBe(false)
  expect(agent.session.events.filter((event) => event.type === 'user/message')).toHaveLength(0)
  agent.followup('what now?')
  await agent.whenIdle()
  expect(JSON.stringify(h.root.scriptedLlm.requests[0]!.messages)).toContain('the build is red')
})

test("cancel ends the running turn as aborted, and a parent's cancel reaches its child", async () => {
  await boot()
  const parent = await h.agent()
  const child = await h.root.agents.create({ cwd: h.workspace, parent })
  expect(parent.children.has(child)).toBe(true)
  // Calls that would wait 120 s: ending well before that shows the cancel stopped them (not how fast it did).
  h.root.scriptedLlm.enqueue(busy(120_000), busy(120_000))
  parent.followup('long job')
  child.followup('long job too')
  await new Promise((resolve) => setTimeout(resolve, 200))
  const started = Date.now()
  parent.cancel()
  expect(await parent.whenIdle()).toMatchObject({ reason: 'aborted' })
  expect(await child.whenIdle()).toMatchObject({ reason: 'aborted' })
  expect(Date.now() - started).toBeLessThan(40_000)
  expect(turnEnds(parent)).toEqual(['aborted'])
  expect(turnEnds(child)).toEqual(['aborted'])
})

test('a disposed agent takes no input, leaves the list with its children, and its session is closed', async () => {
  await boot()
  const parent = await h.agent()
  const child = await h.root.agents.create({ cwd: h.workspace, parent })
  await parent.dispose()
  expect(parent.status).toBe('disposed')
  expect(child.status).toBe('disposed')
  expect(h.root.agents.list()).toEqual([])
  expect(h.root.sessions.get(parent.session.id)).toBeUndefined()
  expect(() => parent.followup('hello?')).toThrow(`agent ${parent.id} is disposed`)
})

test("a route change is logged once per change, and a new session without one uses the row's default", async () => {
  await boot()
  const agent = await h.agent()
  expect(agent.route).toEqual({ provider: 'scripted', model: 'scripted-1' })
  agent.setRoute({ provider: 'scripted', model: 'scripted-2' })
  agent.setRoute({ provider: 'scripted', model: 'scripted-2' })
  const routes = agent.session.events.filter((event) => event.type === 'model/route')
  expect(routes.map((event) => event.data)).toEqual([{ route: { provider: 'scripted', model: 'scripted-2' } }])
  expect(agent.route).toEqual({ provider: 'scripted', model: 'scripted-2' })
})

test('a chosen system prompt is a logged fact that a resumed session keeps, and resuming a live session returns its agent', async () => {
  await boot()
  h.root.scriptedLlm.enqueue({ text: 'ok' })
  const agent = await h.root.agents.create({ cwd: h.workspace, systemPrompt: 'You only answer in haiku.' })
  expect(
    agent.session.events.filter((event) => event.type === 'agent/system-prompt').map((event) => event.data),
  ).toEqual([{ text: 'You only answer in haiku.' }])
  expect(await h.root.agents.resume(agent.session.id)).toBe(agent)
  agent.followup('hi')
  await agent.whenIdle()
  await agent.session.flush()
  const id = agent.session.id
  await agent.dispose()
  const resumed = await h.root.agents.resume(id)
  expect(resumed).not.toBe(agent)
  expect(resumed.systemPrompt).toBe('You only answer in haiku.')
  // The kind is declared by its schema, which is its check too.
  expect(() => resumed.session.append('agent/system-prompt', { text: 3 } as never)).toThrow(
    'data.text must be a string',
  )
})

// Issue #28.3: the web resumes a session released while idle, and an SDK client may resume it twice at once.
test('two resumes of one stored session at once both get the one agent, with no SESSION_LOCKED', async () => {
  await boot()
  h.root.scriptedLlm.enqueue({ text: 'ok' }, { text: 'again' })
  const agent = await h.agent()
  await h.run('hi')
  const id = agent.session.id
  await agent.dispose()
  const [first, second] = await Promise.all([h.root.agents.resume(id), h.root.agents.resume(id)])
  expect(second).toBe(first)
  expect(h.root.agents.list().filter((one) => one.session.id === id)).toEqual([first])
  first.followup('more')
  expect(await first.whenIdle()).toMatchObject({ reason: 'completed', text: 'again' })
})

test('a fork holds the events up to the chosen one, on a session of its own', async () => {
  await boot()
  h.root.scriptedLlm.enqueue({ text: 'first answer' }, { text: 'second answer' })
  const agent = await h.agent()
  await h.run('one')
  const cut = agent.session.length - 1
  await h.run('two')
  await agent.session.flush()
  const fork = await h.root.agents.fork(agent.session.id, cut)
  expect(fork.session.id).not.toBe(agent.session.id)
  expect(userTexts(fork)).toEqual(['one'])
  expect(userTexts(agent)).toEqual(['one', 'two'])
})

/** A promise the test resolves, and a signal that the code under test reached it. */
function gate() {
  let open!: () => void
  let reached!: () => void
  const opened = new Promise<void>((resolve) => (open = resolve))
  const arrived = new Promise<void>((resolve) => (reached = resolve))
  return { open, opened, arrived, reached }
}

// Issue #28.1: after the last step the turn still runs agent/turn-complete, agent/turn-stopping (the title
// request) and turn/end; a steer sent in that gap must start the next turn at once, not wait for a later message.
for (const point of ['agent/turn-complete', 'agent/turn-stopping', 'turn/end'] as const) {
  test(`a steer sent during ${point} of a finishing turn starts the next turn at once and is in the log`, async () => {
    await boot()
    h.root.scriptedLlm.enqueue({ text: 'first' }, { text: 'answers the steer' })
    const agent = await h.agent()
    const g = gate()
    let armed = true
    if (point === 'agent/turn-complete')
      h.root.on('agent/turn-complete', async (completion, next) => {
        if (armed && completion.agent === agent) {
          armed = false
          g.reached()
          await g.opened
        }
        return next()
      })
    if (point === 'agent/turn-stopping')
      h.root.on('agent/turn-stopping', async (who) => {
        if (armed && who === agent) {
          armed = false
          g.reached()
          await g.opened
        }
      })
    if (point === 'turn/end')
      // The steer arrives between turn/end and the loop handing its result back (the final flush).
      h.root.on('session/event', (session, event) => {
        if (armed && session === agent.session && event.type === 'turn/end') {
          armed = false
          agent.steer('late steer')
          g.reached()
          g.open()
        }
      })
    agent.followup('do it')
    await g.arrived
    if (point !== 'turn/end') agent.steer('late steer')
    g.open()
    const result = await agent.whenIdle()
    expect(result).toMatchObject({ reason: 'completed', text: 'answers the steer' })
    expect(userTexts(agent)).toEqual(['do it', 'late steer'])
    expect(turnEnds(agent)).toEqual(['completed', 'completed'])
    expect(h.root.scriptedLlm.requests.length).toBe(2)
    expect(JSON.stringify(h.root.scriptedLlm.requests[1]!.messages)).toContain('late steer')
    expect(agent.running).toBe(false)
  })
}
