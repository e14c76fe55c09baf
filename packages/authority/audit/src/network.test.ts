import { spawn } from 'node:child_process'
import { createServer } from 'node:http'
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import type {} from '@dsh/approval'
import type {} from '@dsh/network'
import { startMockServer } from '@dsh/llm-mock-server'
import type NetworkProxy from '@dsh/network-proxy'
import { appDir, bootComposition, scriptedPatch, toolCall } from '@dsh/test-harness'
import { auditSession, renderAudit } from './index.ts'

/** A real HTTP server on the host's loopback for the proxy to reach. */
async function server(): Promise<number> {
  const http = createServer((_req, res) => res.end('hi\n'))
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  onTestFinished(() => new Promise<void>((resolve) => http.close(() => resolve())))
  return (http.address() as { port: number }).port
}

const curl = (id: string, url: string) => toolCall(id, 'bash', { command: `curl -sS --max-time 10 ${url}` })

test('the audit lists every network decision (host, port, decision, rule) and every grant with the approval that made it', async () => {
  const port = await server()
  const h = await bootComposition({
    patch: scriptedPatch(),
    homeFiles: { 'settings.yaml': 'network.allow: [api.test]\nnetwork.deny: [evil.test]\n' },
  })
  onTestFinished(() => h.dispose())
  ;(h.root.network as NetworkProxy).useResolver(h.root, async () => ['127.0.0.1'])
  h.root.approval.answerer(h.root, async (request) =>
    request.summary === `connect to new.test:${port}` ? 'allow_once' : 'reject',
  )
  h.root.scriptedLlm.enqueue(
    curl('allowed', `http://api.test:${port}/`),
    curl('denied', `http://evil.test:${port}/`),
    curl('asked', `http://new.test:${port}/`),
    curl('granted', `http://new.test:${port}/`),
    curl('rejected', `http://other.test:${port}/`),
    { text: 'done' },
  )
  await h.run('fetch')
  const { session } = await h.agent()
  const network = auditSession(session.events).filter((entry) => entry.kind.startsWith('network/'))
  const requestId = h.events('network/grant')[0]!.data.requestId
  expect(network.map((entry) => [entry.kind, entry.summary])).toEqual([
    ['network/decision', `network api.test:${port} ALLOWED by network.allow "api.test" (address 127.0.0.1)`],
    ['network/decision', `network evil.test:${port} REFUSED by network.deny "evil.test"`],
    ['network/decision', `network new.test:${port} APPROVED by approval (address 127.0.0.1)`],
    [
      'network/grant',
      `network grant: new.test allowed for the rest of the session by the approval of "connect to new.test:${port}"`,
    ],
    ['network/decision', `network new.test:${port} ALLOWED by session grant (address 127.0.0.1)`],
    ['network/decision', `network other.test:${port} REFUSED by approval rejected (address 127.0.0.1)`],
  ])
  expect(network[3]!.data).toEqual({ host: 'new.test', requestId })
  for (const entry of network) expect(session.events[entry.seq]).toMatchObject({ type: entry.kind, data: entry.data })
  const text = renderAudit(auditSession(session.events), { sessionId: session.id })
  for (const entry of network) expect(text).toContain(`#${entry.seq}`)
})

function dsh(
  args: string[],
  env: Record<string, string>,
  cwd: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [join(appDir, 'bin/dsh.js'), ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk))
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })))
}

test('`dsh sessions show <id> --audit` prints every network decision of a session run by the real launcher', async () => {
  const port = await server()
  const llm = await startMockServer()
  onTestFinished(() => llm.close())
  const home = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-audit-home-')))
  const repo = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-audit-repo-')))
  onTestFinished(() => [home, repo].forEach((dir) => rmSync(dir, { recursive: true, force: true })))
  writeFileSync(join(home, 'settings.yaml'), 'network.allow: [127.0.0.1]\n')
  const env = {
    HOME: home,
    DSH_HOME: home,
    DEEPSEEK_BASE_URL: llm.url,
    DEEPSEEK_API_KEY: 'sk-audit-network-0123456789',
  }
  const bash = (id: string, command: string) => ({ toolCalls: [{ id, name: 'bash', arguments: { command } }] })
  llm.enqueue(
    bash('fetch', `curl -sS --max-time 10 http://127.0.0.1:${port}/; curl -sS --max-time 10 http://localhost:${port}/`),
    { text: 'done' },
  )
  const run = await dsh(['--json', 'fetch twice'], env, repo)
  // The refused host was a question nobody could answer in a headless run: exit 1, naming the refusal.
  expect(run.code, run.stderr).toBe(1)
  expect(run.stderr).toContain('dsh: refused network: connect to localhost')
  const sessionId = JSON.parse(run.stdout.split('\n')[0]!).sessionId
  const audit = await dsh(['sessions', 'show', sessionId, '--audit'], env, repo)
  expect(audit.code, audit.stderr).toBe(0)
  expect(audit.stdout).toMatch(
    new RegExp(
      `^#\\d+ +\\S+  network 127\\.0\\.0\\.1:${port} ALLOWED by network\\.allow "127\\.0\\.0\\.1" \\(address 127\\.0\\.0\\.1\\)$`,
      'm',
    ),
  )
  expect(audit.stdout).toMatch(
    new RegExp(
      `^#\\d+ +\\S+  approval asked for network \\(connect to localhost:${port}\\).*\\[offers rule network\\(localhost\\)\\]$`,
      'm',
    ),
  )
  expect(audit.stdout).toMatch(
    new RegExp(
      `^#\\d+ +\\S+  network localhost:${port} REFUSED by not in network\\.allow, nobody can approve \\(address 127\\.0\\.0\\.1\\)$`,
      'm',
    ),
  )
})
