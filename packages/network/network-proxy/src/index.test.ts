import { createSocket } from 'node:dgram'
import { createServer, type Server } from 'node:http'
import { expect, onTestFinished, test } from 'vitest'
import type {} from '@dsh/approval'
import type { ScriptedResponse } from '@dsh/llm-scripted'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'
import NetworkProxy from './index.ts'

/** A real HTTP server on the host's loopback that counts the connections it ever saw. */
async function countingServer(): Promise<{ port: number; connections: () => number }> {
  let connections = 0
  const server: Server = createServer((_req, res) => res.end('hello from the host\n'))
  server.on('connection', () => void connections++)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return { port: (server.address() as { port: number }).port, connections: () => connections }
}

async function boot(script: ScriptedResponse[], options: { settings?: string; rows?: string } = {}): Promise<Harness> {
  const h = await bootComposition({ patch: scriptedPatch({}, options.rows ?? ''), homeFiles: options.settings ? { 'settings.yaml': options.settings } : {} })
  onTestFinished(() => h.dispose())
  h.root.scriptedLlm.enqueue(...script)
  return h
}

/** Maps test names to the host's loopback for the proxy, as if a DNS server answered them. */
function mapNames(h: Harness, names: Record<string, string>) {
  ;(h.root.network as NetworkProxy).useResolver(h.root, async (host) => {
    if (names[host]) return [names[host]]
    throw Object.assign(new Error(`unknown test name ${host}`), { code: 'ENOTFOUND' })
  })
}

const bash = (id: string, command: string) => toolCall(id, 'bash', { command })
const decisions = (h: Harness) => h.events('network/decision').map((event) => event.data)

test('a confined command reaches no loopback service: through the proxy it is refused by name, directly it cannot connect', async () => {
  const server = await countingServer()
  const url = `http://127.0.0.1:${server.port}/`
  const python = `python3 -c "import socket; socket.create_connection(('127.0.0.1', ${server.port}), 3)"`
  const node = `node -e "require('net').connect(${server.port}, '127.0.0.1').on('connect', () => console.log('connected')).on('error', (e) => { console.log(e.code); process.exit(1) })"`
  const h = await boot([
    bash('proxied', `curl -sS --max-time 10 ${url}`),
    bash('direct', `curl -sS --max-time 5 --noproxy '*' ${url}; echo "exit $?"`),
    bash('python', `${python}; echo "exit $?"`),
    bash('node', `${node}; echo "exit $?"`),
    { text: 'done' },
  ])
  await h.run('exfiltrate')
  expect(h.toolText('proxied')).toContain(`dsh: network not allowed: 127.0.0.1 (add it to network.allow in ${h.home}/settings.yaml)`)
  expect(h.toolText('direct')).toMatch(/Failed to connect|Couldn't connect/)
  expect(h.toolText('python')).toMatch(/ConnectionRefusedError|OSError[\s\S]*exit 1/)
  expect(h.toolText('node')).toContain('ECONNREFUSED')
  expect(h.toolText('node')).not.toContain('connected\n')
  expect(server.connections()).toBe(0)
  expect(decisions(h)).toEqual([{ host: '127.0.0.1', port: server.port, decision: 'refused', rule: 'not in network.allow, nobody can approve', address: '127.0.0.1' }])
})
