// The JSON Schema of every tool's arguments, as a request to the model carries it. The snapshot was recorded
// before the tools declared their arguments with TypeBox (@dsh/tools `defineTool`): it must not change
// unless a tool's arguments change on purpose.
import { afterEach, expect, test } from 'vitest'
import { bootComposition, scriptedPatch, type Harness } from './index.ts'

let h: Harness | undefined
afterEach(async () => {
  await h?.dispose()
  h = undefined
})

/** The tools of the first request, as plain JSON (what an adapter serializes), keyed by name. */
async function sentSchemas(patch: string): Promise<Record<string, unknown>> {
  h = await bootComposition({ patch })
  h.root.scriptedLlm.enqueue({ text: 'ok' })
  expect((await h.run('list your tools')).reason).toBe('completed')
  const tools = JSON.parse(JSON.stringify(h.root.scriptedLlm.requests[0]!.tools)) as { name: string }[]
  return Object.fromEntries(tools.map((tool) => [tool.name, tool]))
}

test('the default tools and the fixture tools send the recorded schemas', async () => {
  expect(await sentSchemas(scriptedPatch({ fixtureTools: true }))).toMatchSnapshot()
})

test('the persistent bash sends the recorded schema', async () => {
  const tools = await sentSchemas(scriptedPatch({}, "- id: tool-bash\n  name: '@dsh/tool-bash-persistent'\n"))
  expect(tools.bash).toMatchSnapshot()
})
