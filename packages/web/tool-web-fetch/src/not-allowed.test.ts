import { createServer } from 'node:http'
import { afterAll, beforeAll, expect, test } from 'vitest'
import type {} from '@dsh/approval'
import type NetworkProxy from '@dsh/network-proxy'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'

let h: Harness
let connections = 0
const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('hello'))
server.on('connection', () => void connections++)
let port = 0

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  port = (server.address() as { port: number }).port
  h = await bootComposition({ patch: scriptedPatch({}, `- id: tool-web-fetch\n  disabled: false\n`) })
  ;(h.root.network as NetworkProxy).useResolver(h.root, async () => ['127.0.0.1'])
}, 60_000)

afterAll(async () => {
  await h?.dispose()
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

test('a host not in network.allow is refused when nobody can approve, and the server sees nothing', async () => {
  h.root.scriptedLlm.enqueue(toolCall('unknown', 'web_fetch', { url: `http://unknown.test:${port}/` }), {
    text: 'done',
  })
  await h.run('fetch it')
  expect(h.toolText('unknown')).toContain(
    `web_fetch http://unknown.test:${port}/: dsh: network not allowed: unknown.test (add it to network.allow in ${h.home}/settings.yaml)`,
  )
  expect(connections).toBe(0)
  expect(h.events('network/decision').at(-1)!.data).toMatchObject({
    host: 'unknown.test',
    decision: 'refused',
    rule: 'not in network.allow, nobody can approve',
  })
})

test('a host not in network.allow asks a person: rejected it is refused, approved it is fetched', async () => {
  const asked: string[] = []
  const reasons: string[] = []
  h.root.approval.answerer(h.root, async (request) => {
    asked.push(`${request.tool}: ${request.summary}`)
    reasons.push(request.reason ?? '')
    return request.summary.includes('no.test') ? 'reject' : 'allow_once'
  })
  h.root.scriptedLlm.enqueue(
    toolCall('no', 'web_fetch', { url: `http://no.test:${port}/` }),
    toolCall('yes', 'web_fetch', { url: `http://yes.test:${port}/` }),
    { text: 'done' },
  )
  await h.run('fetch both')
  expect(asked).toEqual([`network: connect to no.test:${port}`, `network: connect to yes.test:${port}`])
  expect(reasons[0]).toContain('(a confined command, or web_fetch) asks to reach no.test')
  expect(h.toolText('no')).toContain('dsh: network not allowed: no.test (the approval was refused')
  expect(h.toolText('yes')).toContain(`[Untrusted content from http://yes.test:${port}/ (HTTP 200, text/plain, 5 B)`)
  expect(h.toolText('yes')).toContain('\nhello')
  expect(connections).toBe(1)
})
