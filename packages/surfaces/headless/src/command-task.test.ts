// End to end with the real launcher (in-process: test-support/dsh.ts): a task that starts with a command.
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { conversation, dsh, makeWorld, type World } from './test-support/dsh.ts'

let world: World
beforeEach(async () => {
  world = await makeWorld()
})
afterEach(async () => {
  await world.dispose()
})

describe('a task that starts with a slash command', () => {
  test('a .claude/commands command runs with its arguments: the model gets the expanded prompt', async () => {
    world.write(
      '.claude/commands/greet.md',
      '---\ndescription: Greet someone\nargument-hint: <name>\n---\nSay hello to $1, politely.\n',
    )
    world.llm.enqueue({ text: 'Hello, Ada.' })
    const { code, stdout } = await dsh(world, ['/greet Ada'])
    expect({ code, stdout }).toEqual({ code: 0, stdout: 'Hello, Ada.\n' })
    expect(conversation(world.llm.requests[0]!.body)).toEqual(['user: Say hello to Ada, politely.'])
  })

  test('a built-in prints its output and makes no model request', async () => {
    world.write('.dsh/commands/greet.md', 'Say hello.\n')
    const { code, stdout } = await dsh(world, ['/help'])
    expect(code).toBe(0)
    expect(stdout).toContain('/greet — Say hello.')
    expect(stdout).toContain('/compact')
    expect(world.llm.requests).toHaveLength(0)
  })

  test('an unknown /word is sent to the model as text, and stderr says so', async () => {
    world.llm.enqueue({ text: 'ok' })
    const { code, stderr } = await dsh(world, ['/nosuch thing'])
    expect(code).toBe(0)
    expect(stderr).toContain('/nosuch is not a command here: it was sent to the model as text')
    expect(conversation(world.llm.requests[0]!.body)).toEqual(['user: /nosuch thing'])
  })

  test('a failing command exits 1 with one line naming it', async () => {
    const { code, stderr } = await dsh(world, ['/model nowhere/x'])
    expect(code).toBe(1)
    expect(stderr).toMatch(/^dsh: \/model failed: no model provider "nowhere" is mounted .*\(COMMAND_BAD_ARGS\)/)
  })
})
