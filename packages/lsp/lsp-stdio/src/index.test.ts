import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { createServer, type Socket } from 'node:net'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'

const require = createRequire(import.meta.url)
const languageServer = join(require.resolve('typescript-language-server/package.json'), '..', 'lib', 'cli.mjs')
const tsserver = require.resolve('typescript/lib/tsserver.js')
const escapeServer = fileURLToPath(new URL('./fixtures/escape-server.mjs', import.meta.url))

/** A loopback TCP server on the host: a confined language server must not reach it. */
const connections: Socket[] = []
const loopback = createServer((socket) => (connections.push(socket), socket.end()))
let port = 0

const servers = () =>
  JSON.stringify({
    typescript: {
      command: ['node', languageServer, '--stdio'],
      extensions: ['.ts'],
      rootMarkers: ['tsconfig.json'],
      initializationOptions: { tsserver: { path: tsserver, disableAutomaticTypingAcquisition: true } },
    },
    fake: {
      command: ['dsh-no-such-language-server', '--stdio'],
      extensions: ['.fake'],
      rootMarkers: ['fake.toml'],
      install: 'npm install -g dsh-no-such-language-server',
    },
    stray: { command: ['dsh-no-such-stray-server'], extensions: ['.stray'], rootMarkers: ['stray.toml'] },
    hostile: { command: ['node', escapeServer, String(port), 'PLACEHOLDER'], extensions: ['.hostile'] },
  })

const SECRET = 'lsp-secret-value-0123456789'
let h: Harness
let disposed = false

beforeAll(async () => {
  await new Promise<void>((resolve) => loopback.listen(0, '127.0.0.1', resolve))
  port = (loopback.address() as { port: number }).port
  process.env.DSH_LSP_TEST_SECRET_TOKEN = SECRET
  h = await bootComposition({
    patch: scriptedPatch(
      {},
      `- id: lsp\n  config: { servers: ${servers()}, firstDiagnosticsWaitMs: 45000, requestTimeoutMs: 1500 }\n`,
    ),
    workspaceFiles: {
      'tsconfig.json': JSON.stringify({ compilerOptions: { strict: true, noEmit: true }, include: ['src'] }),
      'src/greet.ts': 'export function greet(name: string): string {\n  return `hello ${name}`\n}\n',
      'src/main.ts': "import { greet } from './greet'\n\nexport const message: string = greet('world')\n",
      'fake.toml': '',
      'notes.fake': 'first\n',
      'loose.stray': 'first\n',
    },
  })
  // The hostile server's target file lives in the workspace, known only now.
  const settings = JSON.parse(servers().replace('PLACEHOLDER', join(h.workspace, 'pwned.txt')))
  await h.root.settings.set('lsp.servers', { hostile: settings.hostile })
}, 60_000)

/** Processes whose command line names `text` (a server's argv holds its workspace or script path). */
const processesNaming = (text: string) =>
  readdirSync('/proc')
    .filter((pid) => /^\d+$/.test(pid))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text)
      } catch {
        return false
      }
    })

afterAll(async () => {
  delete process.env.DSH_LSP_TEST_SECRET_TOKEN
  if (!disposed) await h?.dispose()
  await new Promise<void>((resolve) => loopback.close(() => resolve()))
})

test('an edit that introduces a type error returns that diagnostic in the edit result', async () => {
  h.root.scriptedLlm.enqueue(
    toolCall('read', 'read', { path: 'src/main.ts' }),
    toolCall('bad', 'edit', { path: 'src/main.ts', old_string: "greet('world')", new_string: 'greet(42)' }),
    toolCall('good', 'edit', { path: 'src/main.ts', old_string: 'greet(42)', new_string: "greet('again')" }),
    { text: 'done' },
  )
  await h.run('break it, then fix it')
  const bad = h.toolText('bad')
  expect(bad).toContain('Edited src/main.ts: replaced 1 occurrence.')
  expect(bad).toMatch(
    /reports 1 error in src\/main\.ts:\nsrc\/main\.ts:3:38 error typescript 2345: Argument of type 'number' is not assignable to parameter of type 'string'\./,
  )
  expect(h.toolText('good')).toContain('[typescript: no errors in src/main.ts.]')
  expect(readFileSync(join(h.workspace, 'src/main.ts'), 'utf8')).toContain("greet('again')")
  const took = (callId: string) => {
    const at = (type: 'tool/dispatched' | 'tool/result') =>
      h.events(type).find((event) => event.data.callId === callId)!.time
    return at('tool/result') - at('tool/dispatched')
  }
  console.log(`lsp: edit with diagnostics, cold start ${took('bad')} ms, warm ${took('good')} ms`)
}, 60_000)

test('str_replace_editor changes carry the diagnostics too', async () => {
  h.root.scriptedLlm.enqueue(
    toolCall('view', 'str_replace_editor', { command: 'view', path: 'src/greet.ts' }),
    toolCall('break', 'str_replace_editor', {
      command: 'str_replace',
      path: 'src/greet.ts',
      old_str: 'return `hello ${name}`',
      new_str: 'return name.length',
    }),
    toolCall('undo', 'str_replace_editor', { command: 'undo_edit', path: 'src/greet.ts' }),
    { text: 'done' },
  )
  await h.run('break greet with the editor, then undo')
  expect(h.toolText('break')).toMatch(
    /typescript reports 1 error in src\/greet\.ts:\nsrc\/greet\.ts:2:3 error typescript 2322: Type 'number' is not assignable to type 'string'\./,
  )
  expect(h.toolText('undo')).toContain('[typescript: no errors in src/greet.ts.]')
}, 60_000)

test('a missing language server is told once in the session, and the next edit says nothing of it', async () => {
  h.root.scriptedLlm.enqueue(
    toolCall('read', 'read', { path: 'notes.fake' }),
    toolCall('first', 'edit', { path: 'notes.fake', old_string: 'first', new_string: 'second' }),
    toolCall('second', 'edit', { path: 'notes.fake', old_string: 'second', new_string: 'third' }),
    { text: 'done' },
  )
  await h.run('edit twice')
  expect(h.toolText('first')).toContain(
    '[no language server for .fake: install dsh-no-such-language-server (npm install -g dsh-no-such-language-server), or configure one in the setting lsp.servers.fake]',
  )
  expect(h.toolText('first').match(/language server/g)).toHaveLength(1)
  expect(h.toolText('second')).not.toContain('language server')
  expect(h.toolText('second')).toMatch(/^Edited notes\.fake: replaced 1 occurrence\.\n[^[]*$/)
  expect(h.toolResult('second').error).toBeUndefined()
})

test('outside a project of its language (no root marker) a missing server is not mentioned at all', async () => {
  h.root.scriptedLlm.enqueue(
    toolCall('read', 'read', { path: 'loose.stray' }),
    toolCall('stray', 'edit', { path: 'loose.stray', old_string: 'first', new_string: 'second' }),
    { text: 'done' },
  )
  await h.run('edit a stray file')
  expect(h.toolText('stray')).toMatch(/^Edited loose\.stray: replaced 1 occurrence\.\n[^[]*$/)
  expect(h.toolText('stray')).not.toContain('language server')
})

test('the language server runs confined: it cannot write in the workspace, reach a loopback port or read a secret variable', async () => {
  h.root.scriptedLlm.enqueue(toolCall('w', 'write', { path: 'plan.hostile', content: 'y\n' }), { text: 'done' })
  await h.run('write it')
  const text = h.toolText('w')
  console.log(`lsp: the hostile server reports ${text.slice(text.indexOf('write='))}`)
  // The report is the server's own: what each attempt got inside its sandbox.
  expect(text).toMatch(/write=(EROFS|EACCES|ENOENT) connect=(ECONNREFUSED|ENETUNREACH|timeout) secret=absent home=set/)
  expect(existsSync(join(h.workspace, 'pwned.txt'))).toBe(false)
  expect(connections).toHaveLength(0)
  expect(text).not.toContain(SECRET)
}, 60_000)

test('in danger-full-access the server runs unconfined, yet still without the secret variable', async () => {
  const agent = await h.agent()
  h.root.sandboxPolicy.setMode(agent.session, 'danger-full-access', 'user:cli-flag')
  h.root.scriptedLlm.enqueue(toolCall('open', 'write', { path: 'open.hostile', content: 'y\n' }), { text: 'done' })
  await h.run('write it unconfined')
  // The same server, started again for the unconfined session: this time its attempts reach the world.
  expect(h.toolText('open')).toMatch(/write=written connect=connected secret=absent home=set/)
  expect(readFileSync(join(h.workspace, 'pwned.txt'), 'utf8')).toBe('written by the language server')
  expect(connections).toHaveLength(1)
}, 60_000)

test('a request the server never answers ends at the deadline as LSP_TIMEOUT', async () => {
  h.root.scriptedLlm.enqueue(
    toolCall('hover', 'lsp', { operation: 'hover', path: 'open.hostile', line: 1, column: 1 }),
    { text: 'done' },
  )
  await h.run('hover the hostile file')
  expect(h.toolResult('hover').error).toMatchObject({
    code: 'LSP_TIMEOUT',
    message: expect.stringContaining('hostile language server (node) did not answer textDocument/hover within 1500 ms'),
  })
}, 60_000)

test('disposing the composition shuts every language server down', async () => {
  // This file's servers only (another run may be going on): a confined one's bwrap argv names the workspace,
  // the unconfined hostile one its target file in it.
  const ours = () => processesNaming(h.workspace)
  const before = ours().map((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8'))
  expect(before.some((argv) => argv.includes(languageServer))).toBe(true)
  expect(before.some((argv) => argv.includes(escapeServer) && !argv.includes('bwrap'))).toBe(true)
  disposed = true
  await h.dispose()
  expect(ours()).toEqual([])
}, 60_000)
