import { createRequire } from 'node:module'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'

const require = createRequire(import.meta.url)
const languageServer = join(require.resolve('typescript-language-server/package.json'), '..', 'lib', 'cli.mjs')
const tsserver = require.resolve('typescript/lib/tsserver.js')

const servers = JSON.stringify({
  typescript: {
    command: ['node', languageServer, '--stdio'],
    extensions: ['.ts'],
    rootMarkers: ['tsconfig.json'],
    initializationOptions: { tsserver: { path: tsserver, disableAutomaticTypingAcquisition: true } },
  },
})

let h: Harness

beforeAll(async () => {
  h = await bootComposition({
    patch: scriptedPatch({}, `- id: lsp\n  config: { servers: ${servers}, firstDiagnosticsWaitMs: 45000 }\n`),
    homeFiles: { 'settings.yaml': "sandbox.denyRead: ['src/secret.ts']\n" },
    workspaceFiles: {
      'tsconfig.json': JSON.stringify({ compilerOptions: { strict: true, noEmit: true }, include: ['src'] }),
      'src/greet.ts':
        '/** Says hello. */\nexport function greet(name: string): string {\n  return `hello ${name}`\n}\n\nexport class Greeter {\n  shout(name: string) {\n    return greet(name).toUpperCase()\n  }\n}\n',
      'src/main.ts': "import { greet } from './greet'\n\nexport const message: string = greet('world')\n",
      'src/secret.ts': "export const token = 'not for the model'\n",
      'src/uses.ts': "import { token } from './secret'\n\nexport const length = token.length\n",
    },
  })
}, 60_000)

afterAll(async () => {
  await h?.dispose()
})

test('lsp definition jumps from a call in one file to the function in another', async () => {
  h.root.scriptedLlm.enqueue(
    toolCall('def', 'lsp', { operation: 'definition', path: 'src/main.ts', line: 3, column: 32 }),
    { text: 'done' },
  )
  await h.run('where is greet defined?')
  expect(h.toolResult('def').error).toBeUndefined()
  expect(h.toolText('def')).toBe('src/greet.ts:2:17: export function greet(name: string): string {')
}, 60_000)

test('lsp references, hover and both symbol lists answer from the same server', async () => {
  h.root.scriptedLlm.enqueue(
    toolCall('refs', 'lsp', { operation: 'references', path: 'src/greet.ts', line: 2, column: 17 }),
    toolCall('hover', 'lsp', { operation: 'hover', path: 'src/main.ts', line: 3, column: 32 }),
    toolCall('outline', 'lsp', { operation: 'documentSymbols', path: 'src/greet.ts' }),
    toolCall('search', 'lsp', { operation: 'workspaceSymbols', query: 'Greeter' }),
    { text: 'done' },
  )
  await h.run('tell me about greet')
  expect(h.toolText('refs').split('\n')).toEqual(
    expect.arrayContaining([
      'src/greet.ts:2:17: export function greet(name: string): string {',
      'src/greet.ts:8:12: return greet(name).toUpperCase()',
      "src/main.ts:1:10: import { greet } from './greet'",
      "src/main.ts:3:32: export const message: string = greet('world')",
    ]),
  )
  expect(h.toolText('hover')).toMatch(/^```typescript\n\(alias\) greet\(name: string\): string\n/)
  expect(h.toolText('hover')).toContain('Says hello.')
  expect(h.toolText('outline')).toContain('greet (function) src/greet.ts:2:17')
  expect(h.toolText('outline')).toContain('  shout (method) src/greet.ts:7:3')
  expect(h.toolText('search')).toMatch(/^Greeter \(class\) src\/greet\.ts:6:\d+/m)
}, 60_000)

test('a secret path is refused as read refuses it, before the server sees it', async () => {
  h.root.scriptedLlm.enqueue(
    toolCall('secret', 'lsp', { operation: 'documentSymbols', path: 'src/secret.ts' }),
    toolCall('nopos', 'lsp', { operation: 'definition', path: 'src/main.ts' }),
    { text: 'done' },
  )
  await h.run('outline the secret')
  expect(h.toolResult('secret').error?.code).toBe('FS_READ_DENIED')
  expect(h.toolText('secret')).not.toContain('token')
  expect(h.toolResult('nopos').error).toMatchObject({ code: 'INVALID_ARGS', message: expect.stringContaining('line') })
})

test('a location in a secret file is left out even when an unconfined server finds it', async () => {
  const agent = await h.agent()
  // danger-full-access: the server reads secret.ts (commands could too); the tool still quotes only what read may.
  h.root.sandboxPolicy.setMode(agent.session, 'danger-full-access', 'user:cli-flag')
  h.root.scriptedLlm.enqueue(
    toolCall('token-refs', 'lsp', { operation: 'references', path: 'src/uses.ts', line: 3, column: 23 }),
    { text: 'done' },
  )
  await h.run('who uses token?')
  const text = h.toolText('token-refs')
  expect(text.split('\n')).toEqual([
    "src/uses.ts:1:10: import { token } from './secret'",
    'src/uses.ts:3:23: export const length = token.length',
    '(1 in files you may not read left out)',
  ])
  expect(text).not.toContain('not for the model')
  h.root.sandboxPolicy.setMode(agent.session, 'workspace-write', 'user:cli-flag')
}, 60_000)

test('without any configured server program the lsp tool is not offered', async () => {
  const missing = JSON.stringify({ typescript: { command: ['dsh-no-such-language-server'], extensions: ['.ts'] } })
  const bare = await bootComposition({ patch: scriptedPatch({}, `- id: lsp\n  config: { servers: ${missing} }\n`) })
  try {
    const agent = await bare.agent()
    const names = bare.root.tools.visible(agent.id).map((tool) => tool.name)
    expect(names).toContain('edit')
    expect(names).not.toContain('lsp')
    expect(h.root.tools.visible((await h.agent()).id).map((tool) => tool.name)).toContain('lsp')
  } finally {
    await bare.dispose()
  }
}, 60_000)
