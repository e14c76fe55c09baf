// The JSON Schema of every tool's arguments, as a request to the model carries it. The snapshot was recorded
// before the tools declared their arguments with TypeBox (@dsh/tools `defineTool`): it must not change
// unless a tool's arguments change on purpose.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, expect, test } from 'vitest'
import { bootComposition, scriptedPatch, toolCall, type Harness } from './index.ts'

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

// `lsp` is offered only when a language server's program is on PATH, which differs between machines: it is left
// out here and recorded on its own below with a server every machine has (node).
const WITHOUT_LSP_TOOL = '- id: tool-lsp\n  disabled: true\n'

test('the default tools and the fixture tools send the recorded schemas', async () => {
  expect(await sentSchemas(scriptedPatch({ fixtureTools: true }, WITHOUT_LSP_TOOL))).toMatchSnapshot()
})

test('the lsp tool sends the recorded schema', async () => {
  const servers = "{ servers: { fixture: { command: ['node'], extensions: ['.fixture'] } } }"
  const tools = await sentSchemas(scriptedPatch({}, `- id: lsp\n  config: ${servers}\n`))
  expect(tools.lsp).toMatchSnapshot()
})

test('the persistent bash sends the recorded schema', async () => {
  const tools = await sentSchemas(scriptedPatch({}, "- id: tool-bash\n  name: '@dsh/tool-bash-persistent'\n"))
  expect(tools.bash).toMatchSnapshot()
})

test('arguments that break a declared schema are refused naming the field, and the tool never runs', async () => {
  h = await bootComposition({ patch: scriptedPatch({ fixtureTools: true }) })
  h.root.scriptedLlm.enqueue(
    toolCall('wrong-type', 'write_file', { path: 'a.txt', text: 5 }),
    toolCall('missing', 'write_file', { path: 'b.txt' }),
    toolCall('extra', 'echo', { text: 'hi', shell: 'rm -rf /' }),
    { text: 'done' },
  )
  expect((await h.run('write')).reason).toBe('completed')
  expect(h.toolResult('wrong-type').error?.code).toBe('INVALID_ARGS')
  expect(h.toolText('wrong-type')).toContain('"text" must be string')
  expect(h.toolText('missing')).toContain("must have required property 'text'")
  expect(h.toolText('extra')).toContain('("shell")')
  expect(existsSync(join(h.workspace, 'a.txt'))).toBe(false)
  expect(existsSync(join(h.workspace, 'b.txt'))).toBe(false)
})

test('the logged request header carries the schemas as plain JSON (no TypeBox markers)', async () => {
  h = await bootComposition({ patch: scriptedPatch({ fixtureTools: true }) })
  h.root.scriptedLlm.enqueue({ text: 'ok' })
  await h.run('hi')
  const header = h.events('request/header')[0]!.data as { tools: { parameters: object }[] }
  for (const tool of header.tools) expect(Object.getOwnPropertySymbols(tool.parameters)).toEqual([])
  expect(header.tools.map((tool) => tool.parameters)).toEqual(
    JSON.parse(JSON.stringify(header.tools.map((tool) => tool.parameters))),
  )
})
