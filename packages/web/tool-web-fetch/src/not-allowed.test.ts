import { createServer } from 'node:http'
import { afterAll, beforeAll, expect, test } from 'vitest'
import type {} from '@dsh/approval'
import type NetworkProxy from '@dsh/network-proxy'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'

// A public address no test ever reaches: every name mapped to it is refused before the proxy would dial.
const PUBLIC = '93.184.215.14'

let h: Harness
let connections = 0
const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('hello'))
server.on('connection', () => void connections++)
let port = 0

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  port = (server.address() as { port: number }).port
  h = await bootComposition({ patch: scriptedPatch({}, `- id: tool-web-fetch\n  disabled: false\n`) })
  ;(h.root.network as NetworkProxy).useResolver(h.root, async (host) => [
    host.startsWith('local') ? '127.0.0.1' : PUBLIC,
  ])
}, 60_000)

afterAll(async () => {
  await h?.dispose()
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

test('a host not in network.allow is refused when nobody can approve', async () => {
  h.root.scriptedLlm.enqueue(toolCall('unknown', 'web_fetch', { url: `http://unknown.test:${port}/` }), {
    text: 'done',
  })
  await h.run('fetch it')
  expect(h.toolText('unknown')).toContain(
    `web_fetch http://unknown.test:${port}/: dsh: network not allowed: unknown.test (add it to network.allow in ${h.home}/settings.yaml)`,
  )
  expect(h.events('network/decision').at(-1)!.data).toEqual({
    host: 'unknown.test',
    port,
    decision: 'refused',
    rule: 'not in network.allow, nobody can approve',
  })
})

test('a host not in network.allow asks a person, and a rejection refuses it', async () => {
  const asked: string[] = []
  const reasons: string[] = []
  h.root.approval.answerer(h.root, async (request) => {
    asked.push(`${request.tool}: ${request.summary}`)
    reasons.push(request.reason ?? '')
    return 'reject'
  })
  h.root.scriptedLlm.enqueue(toolCall('no', 'web_fetch', { url: `http://no.test:${port}/` }), { text: 'done' })
  await h.run('fetch it')
  expect(asked).toEqual([`network: connect to no.test:${port}`])
  expect(reasons[0]).toContain('(a confined command, or web_fetch) asks to reach no.test')
  expect(h.toolText('no')).toContain('dsh: network not allowed: no.test (the approval was refused')
  expect(h.events('network/decision').at(-1)!.data.rule).toBe('approval rejected')
})

test('no approval admits a loopback or metadata address for web_fetch (as --approve would give): nobody is asked, the server sees nothing', async () => {
  const asked: string[] = []
  h.root.approval.answerer(h.root, async (request) => (asked.push(request.summary), 'allow_once'))
  h.root.scriptedLlm.enqueue(
    toolCall('name', 'web_fetch', { url: `http://local.test:${port}/` }),
    toolCall('literal', 'web_fetch', { url: `http://127.0.0.1:${port}/` }),
    toolCall('metadata', 'web_fetch', { url: 'http://169.254.169.254/latest/meta-data/' }),
    { text: 'done' },
  )
  await h.run('fetch the internal ones')
  expect(h.toolText('name')).toContain(
    `dsh: network not allowed: local.test resolves to the private address 127.0.0.1, which only an exact network.allow entry admits (no approval can; add local.test to network.allow in ${h.home}/settings.yaml)`,
  )
  expect(h.toolText('literal')).toContain('network not allowed: 127.0.0.1 resolves to the private address 127.0.0.1')
  expect(h.toolText('metadata')).toContain('169.254.169.254 resolves to the private address 169.254.169.254')
  expect(asked).toEqual([])
  expect(connections).toBe(0)
  expect(h.events('network/grant')).toEqual([])
})
