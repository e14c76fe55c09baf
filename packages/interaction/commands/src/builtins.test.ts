import { afterEach, describe, expect, test } from 'vitest'
import { bootComposition, scriptedPatch, type Harness } from '@dsh/test-harness'
import type {} from './index.ts'

let h: Harness
afterEach(async () => h?.dispose())

describe('built-in commands', () => {
  test('/model shows the route and switches it as a logged model/route; a provider nobody mounts is refused', async () => {
    h = await bootComposition({ patch: scriptedPatch() })
    const agent = await h.agent()
    expect(await h.root.commands.run(agent, '/model')).toMatchObject({
      output: expect.stringContaining('Model: scripted/scripted-1.'),
    })
    expect(await h.root.commands.run(agent, '/model scripted/scripted-2 high')).toMatchObject({
      output: 'Model: scripted/scripted-2 (effort high) from the next request on.',
    })
    expect(h.events('model/route').at(-1)!.data.route).toEqual({
      provider: 'scripted',
      model: 'scripted-2',
      effort: 'high',
    })
    expect(await h.root.commands.run(agent, '/model nowhere/x')).toMatchObject({
      error: { code: 'COMMAND_BAD_ARGS', message: expect.stringContaining('no model provider "nowhere"') },
    })
    expect(await h.root.commands.run(agent, '/model scripted/x turbo')).toMatchObject({
      error: { code: 'COMMAND_BAD_ARGS' },
    })
  })

  test('/cost adds up the logged usage of the session', async () => {
    h = await bootComposition({ patch: scriptedPatch() })
    h.root.scriptedLlm.enqueue(
      { text: 'a', usage: { input: 100, output: 10, cacheRead: 40, cacheWrite: 0 } },
      { text: 'b', usage: { input: 50, output: 5, cacheRead: 0, cacheWrite: 7 } },
    )
    await h.run('one')
    await h.run('two')
    expect(await h.root.commands.run(await h.agent(), '/cost')).toMatchObject({
      output:
        '2 model requests in this session: input 150, cached 40, cache-write 7, output 15 tokens (prices: dsh usage).',
    })
  })

  test('/clear starts a new session the surface switches to, and /fork copies this one', async () => {
    h = await bootComposition({ patch: scriptedPatch() })
    h.root.scriptedLlm.enqueue({ text: 'hello' })
    await h.run('first')
    const agent = await h.agent()
    const cleared = await h.root.commands.run(agent, '/clear')
    if (!cleared.handled || !('sessionId' in cleared)) throw new Error('not cleared')
    const fresh = h.root.agents.bySession(cleared.sessionId!)!
    expect(fresh.session.id).not.toBe(agent.session.id)
    expect(fresh.session.events.filter((event) => event.type === 'user/message')).toEqual([])
    const forked = await h.root.commands.run(agent, '/fork')
    if (!forked.handled || !('sessionId' in forked)) throw new Error('not forked')
    const copy = h.root.agents.bySession(forked.sessionId!)!
    expect(copy.session.events.map((event) => event.type)).toEqual(agent.session.events.map((event) => event.type))
    expect(await h.root.commands.run(agent, '/fork 99999')).toMatchObject({ error: { code: 'COMMAND_BAD_ARGS' } })
  })
})
