import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import type {} from '@dsh/approval'
import type {} from '@dsh/jobs'
import type { ScriptedResponse } from '@dsh/llm-scripted'
import type {} from '@dsh/permission-presets'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'
import { eventually, outsideDir, processesWith } from '@dsh/test-harness/world'

/** The processes running `command` whose program is python (not a shell or shim that passes it on). */
const pythonServers = (command: string) =>
  processesWith(command).filter((pid) => {
    try {
      return basename(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0]!).startsWith('python')
    } catch {
      return false // it ended meanwhile
    }
  })

async function boot(script: ScriptedResponse[], patch = ''): Promise<Harness> {
  const h = await bootComposition({ patch: scriptedPatch({}, patch) })
  onTestFinished(() => h.dispose())
  h.root.scriptedLlm.enqueue(...script)
  return h
}

const background = (id: string, command: string) => toolCall(id, 'bash', { command, run_in_background: true })
const port = () => 20_000 + Math.floor(Math.random() * 20_000)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Polls `url` until it answers 200 (a server job needs a moment to bind). */
async function answers(url: string, timeoutMs = 30_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (
      await fetch(url).then(
        (response) => response.ok,
        () => false,
      )
    )
      return true
    await sleep(50)
  }
  return false
}

/** Pids of the `sleep` programs (not the shells or sandboxes naming them) whose arguments contain `tag`. */
const sleepers = (tag: string) => processesWith(`sleep ${tag}`).filter((pid) => commandName(pid) === 'sleep')
function commandName(pid: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim()
  } catch {
    return undefined // it ended while we looked
  }
}

const texts = (h: Harness) => h.root.scriptedLlm.requests.map((request) => JSON.stringify(request.messages))

test('a python http.server job started by one step is fetched and polled by the next, killed by job_kill, and leaves no process', async () => {
  const at = port()
  const server = `python3 -m http.server ${at} --bind 127.0.0.1`
  const h = await boot([background('start', server), { text: 'started' }])
  writeFileSync(join((await h.agent()).cwd, 'hello.txt'), 'hello from the workspace\n')
  h.root.permissionPresets.set((await h.agent()).session, 'danger-full-access', 'user:cli-flag')
  await h.run('start a server')
  expect(h.toolText('start')).toMatch(/^Started background job job-1 \(pid \d+\)/)
  // The python process itself: a launcher shim (pyenv's is a bash script) may run before it, naming the same command.
  expect(await eventually(() => pythonServers(server).length === 1, 30_000)).toBe(true)
  const url = `http://127.0.0.1:${at}/hello.txt`
  expect(await answers(url)).toBe(true)

  h.root.scriptedLlm.enqueue(
    toolCall('curl', 'bash', { command: `curl -s ${url}` }),
    toolCall('poll', 'job_output', { job_id: 'job-1' }),
    toolCall('kill', 'job_kill', { job_id: 'job-1' }),
    {
      text: 'done',
    },
  )
  await h.run('fetch it, read the log, stop it')
  expect(h.toolText('curl')).toBe('hello from the workspace')
  expect(h.toolText('poll')).toMatch(/Serving HTTP on 127\.0\.0\.1 port \d+/)
  expect(h.toolText('poll')).toMatch(/"GET \/hello\.txt HTTP\/1\.1" 200/)
  expect(h.toolText('poll')).toContain('[job-1 [running]')
  expect(h.toolText('kill')).toMatch(/^job-1 \[killed by SIG(TERM|KILL)\]/)
  expect(processesWith(server)).toEqual([])
  expect(h.events('job/ended').map((event) => event.data.reason)).toEqual(['killed'])
  await expect(fetch(url)).rejects.toThrow()
})

test('a background job in workspace-write still cannot write outside the workspace, and its exit is noticed at the next step', async () => {
  const outside = outsideDir()
  const h = await boot([
    background('job', `sleep 1; echo in > inside.txt; echo out > ${outside}/pwned.txt; echo finished`),
    { text: 'started' },
  ])
  await h.run('start it')
  expect(await eventually(() => h.events('job/ended').length === 1, 30_000)).toBe(true)
  expect(readFileSync(join(h.workspace, 'inside.txt'), 'utf8')).toBe('in\n')
  expect(existsSync(join(outside, 'pwned.txt'))).toBe(false)
  expect(h.events('job/started')[0]!.data).toMatchObject({ jobId: 'job-1', callId: 'job', mode: 'workspace-write' })
  expect(h.events('job/ended')[0]!.data).toMatchObject({ jobId: 'job-1', reason: 'exited', exitCode: 0 })

  h.root.scriptedLlm.enqueue(toolCall('read', 'job_output', { job_id: 'job-1' }), { text: 'ok' })
  await h.run('what happened?')
  const notice = h.events('user/message').find((event) => event.data.source === 'inject')!
  expect(notice.data.content[0]).toMatchObject({
    text: expect.stringMatching(/^\[Background job job-1 ended: job-1 \[exited with code 0\]/),
  })
  expect(texts(h).filter((request) => request.includes('Background job job-1 ended'))).toHaveLength(texts(h).length - 2)
  expect(h.toolText('read')).toMatch(/Read-only file system\nfinished\n\[job-1 \[exited with code 0\]/)
})

test('a job still running when its session ends is killed with its whole group, and the log says so', async () => {
  const tag = String(5_000_000 + Math.floor(Math.random() * 1_000_000))
  const h = await boot([background('job', `sleep ${tag}1 & sleep ${tag}2`), { text: 'started' }])
  await h.run('start it')
  expect(await eventually(() => sleepers(tag).length === 2, 30_000)).toBe(true)
  const agent = await h.agent()
  await agent.dispose()
  expect(processesWith(`sleep ${tag}`)).toEqual([])
  expect(agent.session.events.filter((event) => event.type === 'job/ended').map((event) => event.data)).toMatchObject([
    { jobId: 'job-1', reason: 'session-ended' },
  ])
})

test('an unconfined job that starts a process in a new session (setsid) loses it with the job too', async () => {
  const tag = String(5_000_000 + Math.floor(Math.random() * 1_000_000))
  const h = await boot(
    [background('job', `setsid sleep ${tag}3 & sleep ${tag}1`), { text: 'started' }],
    '- id: permission-presets\n  config: { default: danger-full-access }\n',
  )
  await h.run('start it')
  expect(await eventually(() => sleepers(tag).length === 2, 30_000)).toBe(true)
  await (await h.agent()).dispose()
  // The setsid sleep left the job's process group: the group kill alone would have missed it.
  expect(
    await eventually(() => processesWith(`sleep ${tag}`).length === 0, 30_000),
    `${processesWith(`sleep ${tag}`)}`,
  ).toBe(true)
})

test('job tools name an unknown job, and list what the session has', async () => {
  const h = await boot([
    toolCall('none', 'job_list', {}),
    toolCall('missing', 'job_output', { job_id: 'job-9' }),
    background('one', 'echo hi'),
    toolCall('list', 'job_list', {}),
    { text: 'ok' },
  ])
  await h.run('look')
  expect(h.toolText('none')).toBe('No background jobs in this session.')
  expect(h.toolResult('missing').error).toEqual({
    code: 'JOB_NOT_FOUND',
    message: 'no job "job-9" in this session (it has none)',
  })
  expect(h.toolText('list')).toMatch(/^job-1 \[(running|exited with code 0)\] echo hi \(in .*\)$/)
})

test('without a jobs row, run_in_background is refused and nothing runs', async () => {
  const h = await boot(
    [background('job', 'echo ran > ran.txt'), { text: 'ok' }],
    '- id: jobs\n  disabled: true\n- id: tool-jobs\n  disabled: true\n',
  )
  await h.run('try')
  expect(h.toolResult('job').error).toMatchObject({
    code: 'INVALID_ARGS',
    message: expect.stringContaining('run_in_background is not available here'),
  })
  await sleep(200)
  expect(existsSync(join(h.workspace, 'ran.txt'))).toBe(false)
})
