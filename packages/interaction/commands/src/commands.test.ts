import { afterEach, describe, expect, test } from 'vitest'
import type { Context } from '@dsh/cordis'
import { bootComposition, scriptedPatch, type Harness } from '@dsh/test-harness'
import type {} from './index.ts'

const PATCH = scriptedPatch()

let h: Harness
afterEach(async () => h?.dispose())

describe('slash commands', () => {
  test('a registered command runs with its arguments and /help lists it', async () => {
    h = await bootComposition({ patch: PATCH })
    const agent = await h.agent()
    const calls: string[] = []
    h.root.commands.register(h.root, {
      name: 'shout',
      description: 'Say it louder.',
      run: (args, context) => (calls.push(context.agent.id), args.toUpperCase()),
    })
    expect(await h.root.commands.run(agent, '  /shout  hello there ')).toEqual({
      handled: true,
      name: 'shout',
      output: 'HELLO THERE',
    })
    expect(calls).toEqual([agent.id])
    const help = await h.root.commands.run(agent, '/help')
    expect(help).toMatchObject({ handled: true, name: 'help' })
    expect((help as { output: string }).output).toContain('/shout — Say it louder.')
    expect(h.types()).toEqual([]) // a command is not a message: nothing reached the log
  })

  test('plain text, a path and an unknown name are not handled, so the surface sends them to the agent', async () => {
    h = await bootComposition({ patch: PATCH })
    const agent = await h.agent()
    for (const line of ['hello', '/usr/bin/env is odd', '/ compact', ''])
      expect(await h.root.commands.run(agent, line)).toEqual({ handled: false })
    expect(await h.root.commands.run(agent, '/nope and more')).toEqual({ handled: false, unknown: 'nope' }) // the surface says it went as text
  })

  test('a command that throws comes back as a typed error', async () => {
    h = await bootComposition({ patch: PATCH })
    const agent = await h.agent()
    h.root.commands.register(h.root, {
      name: 'boom',
      description: 'Fails.',
      run: () => {
        throw Object.assign(new Error('it broke'), { code: 'BOOM' })
      },
    })
    h.root.commands.register(h.root, {
      name: 'plain',
      description: 'Fails without a code.',
      run: async () => {
        throw new Error('no code')
      },
    })
    expect(await h.root.commands.run(agent, '/boom')).toEqual({
      handled: true,
      name: 'boom',
      error: { code: 'BOOM', message: 'it broke' },
    })
    expect(await h.root.commands.run(agent, '/plain')).toEqual({
      handled: true,
      name: 'plain',
      error: { code: 'COMMAND_FAILED', message: 'no code' },
    })
  })

  test('a command ends with its plugin, and a second one of the same name is refused', async () => {
    h = await bootComposition({ patch: PATCH })
    const agent = await h.agent()
    const fiber = h.root.plugin({
      name: 'temp',
      inject: ['commands'],
      apply: (ctx: Context) =>
        ctx.commands.register(ctx, { name: 'temp', description: 'Short-lived.', run: () => 'here' }),
    })
    await fiber
    expect(await h.root.commands.run(agent, '/temp')).toMatchObject({ output: 'here' })
    expect(() => h.root.commands.register(h.root, { name: 'temp', description: 'Again.', run: () => 'x' })).toThrow(
      /already registered/,
    )
    expect(() => h.root.commands.register(h.root, { name: 'Bad Name', description: 'x', run: () => 'x' })).toThrow(
      /invalid command name/,
    )
    await fiber.dispose()
    expect(await h.root.commands.run(agent, '/temp')).toEqual({ handled: false, unknown: 'temp' })
  })
})
