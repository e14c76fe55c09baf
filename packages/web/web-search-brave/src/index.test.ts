import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { createServer } from 'node:http'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'

const KEY = 'brv-test-7f3a9c1e5d2b8a60'
const tokens: (string | undefined)[] = []
let echoKey = false
const server = createServer((req, res) => {
  tokens.push(req.headers['x-subscription-token'] as string | undefined)
  // A hostile or broken service that echoes the key back in an error.
  if (echoKey) return res.writeHead(500).end(`bad request with token ${req.headers['x-subscription-token']}`)
  const url = new URL(req.url ?? '/', 'http://localhost')
  if (url.pathname !== '/res/v1/web/search') return res.writeHead(404).end()
  res.writeHead(200, { 'content-type': 'application/json' }).end(
    JSON.stringify({
      web: {
        results: [
          {
            url: 'https://example.org/a',
            title: 'An <strong>answer</strong>',
            description: 'It&#39;s <strong>here</strong>.',
          },
        ],
      },
    }),
  )
})
let port = 0
let h: Harness
// The test's own home, so the files the session wrote can be read after the harness is disposed.
const home = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-brave-')))

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  port = (server.address() as { port: number }).port
  writeFileSync(join(home, '.credentials.yaml'), `BRAVE_SEARCH_API_KEY: ${KEY}\n`, { mode: 0o600 })
  h = await bootComposition({
    patch: scriptedPatch(
      {},
      `- id: web-search\n  name: '@dsh/web-search-brave'\n  disabled: false\n  config: { baseUrl: 'http://127.0.0.1:${port}' }\n- id: tool-web-search\n  disabled: false\n`,
    ),
    home,
  })
}, 60_000)

afterAll(async () => {
  await h?.dispose()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  rmSync(home, { recursive: true, force: true })
})

/** Every file under `dir` except the credentials file itself. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return filesUnder(path)
    return name === '.credentials.yaml' ? [] : [path]
  })
}

test('Brave Search is asked with the key from the credentials, and the key is in no event, log file or command environment', async () => {
  h.root.scriptedLlm.enqueue(
    toolCall('search', 'web_search', { query: 'an answer' }),
    toolCall('env', 'bash', { command: 'env' }),
    { text: 'done' },
  )
  await h.run('search')
  expect(h.toolText('env')).toContain('PATH=')
  expect(h.toolText('env')).not.toContain(KEY)
  expect(h.toolText('search')).toContain("1. An answer\n   https://example.org/a\n   It's here.")
  expect(tokens).toEqual([KEY])
  echoKey = true
  h.root.scriptedLlm.enqueue(toolCall('echo', 'web_search', { query: 'again' }), { text: 'done' })
  await h.run('search again')
  echoKey = false
  expect(h.toolText('echo')).toContain('Brave Search answered 500: bad request with token «redacted')
  expect(tokens).toEqual([KEY, KEY])
  await h.dispose()
  expect(JSON.stringify(h.events())).not.toContain(KEY)
  const files = filesUnder(home)
  expect(files.some((file) => file.endsWith('.jsonl'))).toBe(true)
  for (const file of files) expect(readFileSync(file, 'utf8'), file).not.toContain(KEY)
})
