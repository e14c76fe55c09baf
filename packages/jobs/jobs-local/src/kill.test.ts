import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import type {} from '@dsh/llm-scripted'
import { bootComposition, scriptedPatch } from '@dsh/test-harness'
import { eventually, processesWith, tempDir } from '@dsh/test-harness/world'
import type {} from './index.ts'

const child = join(import.meta.dirname, 'fixtures/jobs-child.mjs')

/** Starts a composition in a child process whose turn starts `command` as a job; resolves once the job runs. */
async function startChild(preset: string, command: string) {
  const home = tempDir('dsh-jobs-home-')
  const workspace = tempDir('dsh-jobs-ws-')
  const proc = spawn(process.execPath, [child, home, workspace, preset, Buffer.from(command).toString('base64')], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  onTestFinished(() => void proc.kill('SIGKILL'))
  let stderr = ''
  proc.stderr.on('data', (chunk) => (stderr += chunk))
  const sessionId = await new Promise<string>((resolve, reject) => {
    let out = ''
    proc.stdout.on('data', (chunk) => {
      out += chunk
      const match = out.match(/READY (\S+)/)
      if (match) resolve(match[1]!)
    })
    proc.on('exit', (code) => reject(new Error(`child exited ${code} before it was ready: ${stderr}`)))
  })
  const exited = new Promise<void>((resolve) => proc.on('exit', () => resolve()))
  return { proc, home, workspace, sessionId, exited }
}

test.each(['workspace-write', 'danger-full-access'])(
  'kill -9 of dsh leaves no process of a %s job, and the resumed log records the job as lost',
  async (preset) => {
    const tag = `http.server ${20_000 + Math.floor(Math.random() * 20_000)}`
    const run = await startChild(preset, `python3 -m ${tag} --bind 127.0.0.1`)
    expect(await eventually(() => processesWith(tag).length > 0, 30_000), `${processesWith(tag)}`).toBe(true)
    run.proc.kill('SIGKILL')
    await run.exited
    expect(await eventually(() => processesWith(tag).length === 0, 30_000)).toBe(true)

    const h = await bootComposition({ home: run.home, workspace: run.workspace, patch: scriptedPatch() })
    onTestFinished(() => h.dispose())
    const agent = await h.root.agents.resume(run.sessionId)
    const lost = agent.session.events.filter((event) => event.type === 'job/lost')
    expect(lost.map((event) => event.data)).toEqual([{ jobId: 'job-1' }])
    expect(h.root.jobs.list(agent.session)).toMatchObject([
      { jobId: 'job-1', status: 'lost', command: `python3 -m ${tag} --bind 127.0.0.1` },
    ])
  },
)

test('kill -9 of dsh also ends an unconfined job that ignores the hang-up, all its group, and what it started outside it', async () => {
  const tag = String(6_000_000 + Math.floor(Math.random() * 1_000_000))
  const run = await startChild(
    'danger-full-access',
    `trap "" HUP; setsid sleep ${tag}3 & sleep ${tag}1 & sleep ${tag}2`,
  )
  expect(
    await eventually(() => processesWith(`sleep ${tag}`).length === 4, 30_000),
    `${processesWith(`sleep ${tag}`)}`,
  ).toBe(true) // bash, both sleeps, the setsid one
  run.proc.kill('SIGKILL')
  await run.exited
  expect(
    await eventually(() => processesWith(`sleep ${tag}`).length === 0, 30_000),
    `${processesWith(`sleep ${tag}`)}`,
  ).toBe(true)
})
