import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, expect, test } from 'vitest'
import { bootComposition, scriptedPatch, type Harness, WITHOUT_RUNTIME_CONTEXT } from '@dsh/test-harness'
import type { SessionEvent } from '@dsh/session'
import type {} from '@dsh/llm-scripted'

let harnesses: Harness[] = []
afterEach(async () => {
  for (const h of harnesses) await h.dispose()
  harnesses = []
})

const TOOLS = "    - id: fixture-tools\n      name: '@dsh/test-harness/fixture-tools'\n"

/** The log without what legitimately differs between two runs: times, turn ids, receipts, the route and the adapter's provider tag. */
function normalized(events: readonly SessionEvent[]) {
  return events
    .filter((event) => event.type !== 'model/route' && event.type !== 'request/context')
    .map((event) => {
      const data = JSON.parse(
        JSON.stringify(event.data)
          .replace(/"(turnId|messageId)":"[^"]+"/g, '"$1":"ID"')
          .replace(/"provider":"(scripted|replay)"/g, '"provider":"P"'),
      )
      return { type: event.type, data }
    })
}

test('a stored session replays through llm-replay with no key and yields the same log', async () => {
  const original = await bootComposition({
    patch: scriptedPatch({ fixtureTools: true, model: 'm' }),
  })
  harnesses.push(original)
  original.root.scriptedLlm.enqueue(
    {
      reasoning: 'plan: write then read',
      toolCalls: [{ id: 'w', name: 'write_file', arguments: { path: 'a.txt', text: 'hello' } }],
    },
    { toolCalls: [{ id: 'r', name: 'read_file', arguments: { path: 'a.txt' } }] },
    { text: 'The file says hello.' },
    { text: 'Second answer.' },
  )
  await original.run('write and read a.txt')
  await original.run('anything else?')
  const stored = await original.agent()
  const sessionId = stored.session.id
  await stored.dispose()

  const replay = await bootComposition({
    home: original.home,
    workspace: original.workspace,
    patch: `- insert:\n    - id: replay\n      name: '@dsh/llm-replay'\n      config: { sessionId: ${sessionId} }\n${TOOLS}- id: agents\n  config: { route: { provider: replay, model: m } }\n${WITHOUT_RUNTIME_CONTEXT}`, // as scriptedPatch leaves it out of the original
  })
  harnesses.push(replay)
  rmSync(join(original.workspace, 'a.txt'))
  await replay.run('write and read a.txt')
  await replay.run('anything else?')
  expect(readFileSync(join(replay.workspace, 'a.txt'), 'utf8')).toBe('hello')
  const storedEvents = (await replay.root.sessions.read(sessionId)).events
  expect(normalized(replay.events()).map((e) => e.type)).toEqual(normalized(storedEvents).map((e) => e.type))
  expect(normalized(replay.events())).toEqual(normalized(storedEvents))
  expect(replay.events('turn/end').map((event) => event.data.reason)).toEqual(['completed', 'completed'])
})
