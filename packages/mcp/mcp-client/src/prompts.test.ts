import { expect, test } from 'vitest'
import { eventually } from '@dsh/test-harness/world'
import { boot, userFile } from './fixtures/boot.ts'

test("a server's prompts are slash commands: its text becomes the user message, the use is logged as mcp/prompt, a missing argument is named", async () => {
  const h = await boot([{ text: 'reviewed' }], { homeFiles: { 'mcp.yaml': userFile('trust: allow, start: eager') } })
  const agent = await h.agent()
  expect(await eventually(() => h.events('mcp/status').some((event) => event.data.state === 'started'), 30_000)).toBe(
    true,
  )
  expect(await h.root.commands.list(agent.cwd)).toContainEqual({
    name: 'mcp__t__review',
    description: 'Asks for a review of a topic. (MCP server "t")',
    argumentHint: '<topic> [tone]',
    origin: 'mcp:t',
  })

  const missing = await h.root.commands.run(agent, '/mcp__t__review')
  expect(missing).toMatchObject({
    handled: true,
    error: { code: 'MCP_PROMPT_ARGS', message: '/mcp__t__review: missing topic' },
  })
  expect(await h.root.commands.run(agent, '/mcp__t__review topic="the cache" tone=gentle')).toMatchObject({
    prompt: 'Please review the cache in a gentle tone.',
  })
  const outcome = await h.root.commands.run(agent, '/mcp__t__review the parser')
  expect(outcome).toMatchObject({ handled: true, output: 'MCP prompt t/review', prompt: 'Please review the parser.' })
  expect(h.events('mcp/prompt').map((event) => event.data)).toEqual([
    { server: 't', prompt: 'review', arguments: { topic: 'the cache', tone: 'gentle' } },
    { server: 't', prompt: 'review', arguments: { topic: 'the parser' } },
  ])

  // The surface sends the prompt as the user's message: the model gets exactly that text.
  await h.run((outcome as { prompt: string }).prompt)
  expect(h.events('user/message').at(-1)?.data).toMatchObject({
    content: [{ type: 'text', text: 'Please review the parser.' }],
  })
})

test('no running server offers prompts in another workspace: its commands are not listed there', async () => {
  // The server lists its prompts slowly: once it is said to be started, its commands are there all the same.
  const h = await boot([{ text: 'done' }], {
    homeFiles: { 'mcp.yaml': userFile('trust: allow, start: eager', ['--slow-prompts', '400']) },
  })
  const agent = await h.agent()
  expect(await eventually(() => h.events('mcp/status').some((event) => event.data.state === 'started'), 30_000)).toBe(
    true,
  )
  expect((await h.root.commands.list(agent.cwd)).map((command) => command.name)).toContain('mcp__t__review')
  expect((await h.root.commands.list('/somewhere/else')).map((command) => command.name)).not.toContain('mcp__t__review')
})
