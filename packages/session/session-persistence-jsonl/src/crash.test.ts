import { spawn } from 'node:child_process'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { bootComposition, scriptedPatch, type Harness } from '@dsh/test-harness'
import { tempDir } from '@dsh/test-harness/world'
import type { AnySessionEvent } from '@dsh/session'
import type {} from '@dsh/llm-scripted'
import type {} from '@dsh/agent'

const child = join(import.meta.dirname, 'fixtures/crash-child.mjs')
const PATCH = scriptedPatch({ fixtureTools: true })

let h: Harness | undefined
afterEach(async () => {
  await h?.dispose()
  h = undefined
})

/** Starts a child running a turn; resolves with its session id when it reaches `point`. */
function startChild(home: string, workspace: string, point: string) {
  const proc = spawn(process.execPath, [child, home, workspace, point], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stderr = ''
  proc.stderr.on('data', (chunk) => (stderr += chunk))
  const ready = new Promise<string>((resolve, reject) => {
    let out = ''
    proc.stdout.on('data', (chunk) => {
      out += chunk
      const match = out.match(/READY (\S+)/)
      if (match) resolve(match[1]!)
    })
    proc.on('exit', (code) => reject(new Error(`child exited ${code} before it was ready: ${stderr}`)))
  })
  const exited = new Promise<void>((resolve) => proc.on('exit', () => resolve()))
  return { proc, ready, exited }
}

async function crashAt(point: string) {
  const home = tempDir('dsh-crash-home-')
  const workspace = tempDir('dsh-crash-ws-')
  const run = startChild(home, workspace, point)
  const sessionId = await run.ready
  run.proc.kill('SIGKILL')
  await run.exited
  return { home, workspace, sessionId }
}

function logFile(home: string, sessionId: string) {
  const key = readdirSync(join(home, 'sessions'))[0]!
  return join(home, 'sessions', key, sessionId, 'session.jsonl')
}

/** Every line parses, seq === index, and the header comes first. */
function expectValidLog(file: string): AnySessionEvent[] {
  const lines = readFileSync(file, 'utf8').split('\n')
  expect(lines.pop()).toBe('')
  const [header, ...events] = lines.map((line) => JSON.parse(line))
  expect(header.format).toBe('dsh-session')
  events.forEach((event, index) => expect(event.seq).toBe(index))
  return events
}

async function resumeAndContinue(home: string, workspace: string, sessionId: string) {
  h = await bootComposition({ home, workspace, patch: PATCH })
  h.root.scriptedLlm.enqueue({ text: 'continuing after the crash' })
  const agent = await h.root.agents.resume(sessionId)
  const repaired = agent.session.events.map((event) => event.type)
  agent.followup('go on')
  const result = await agent.whenIdle()
  return { agent, repaired, result }
}

describe('a crash (SIGKILL) and a resume in a new process', () => {
  test('mid-stream: the text that arrived becomes an interrupted message and the turn ends interrupted', async () => {
    const { home, workspace, sessionId } = await crashAt('mid-stream')
    const { agent, result } = await resumeAndContinue(home, workspace, sessionId)
    expect(result?.reason).toBe('completed')
    const events = expectValidLog(logFile(home, sessionId))
    const cut = events.find((event) => event.type === 'assistant/message')!
    expect(cut.data).toMatchObject({
      interrupted: true,
      finish: 'aborted',
      content: [{ type: 'text', text: 'half an ans' }],
    })
    expect(events.filter((event) => event.type === 'turn/end').map((event) => event.data.reason)).toEqual([
      'interrupted',
      'completed',
    ])
    // The cut answer is logged for people, never history (issue #18): the model sees both prompts, no half answer.
    expect(h!.root.scriptedLlm.requests[0]!.messages.map((m) => m.role)).toEqual(['user', 'user'])
    expect(JSON.stringify(h!.root.scriptedLlm.requests[0]!.messages)).not.toContain('half an ans')
    expect(agent.session.length).toBe(events.length)
  })

  test('between tool/call and tool/result: the running call gets TOOL_OUTCOME_UNKNOWN', async () => {
    const { home, workspace, sessionId } = await crashAt('mid-tool')
    const { result } = await resumeAndContinue(home, workspace, sessionId)
    expect(result?.reason).toBe('completed')
    const events = expectValidLog(logFile(home, sessionId))
    const repaired = events.find((event) => event.type === 'tool/result')!
    expect(repaired.data).toMatchObject({ callId: 'slow', error: { code: 'TOOL_OUTCOME_UNKNOWN' } })
    expect(events.find((event) => event.type === 'turn/end')!.data.reason).toBe('interrupted')
  })

  test('before dispatch (waiting for an approval): the call gets TOOL_NOT_STARTED and the file is absent', async () => {
    const { home, workspace, sessionId } = await crashAt('before-dispatch')
    await resumeAndContinue(home, workspace, sessionId)
    const events = expectValidLog(logFile(home, sessionId))
    expect(events.find((event) => event.type === 'tool/result')!.data).toMatchObject({
      callId: 'guarded',
      error: { code: 'TOOL_NOT_STARTED' },
    })
    expect(() => statSync(join(workspace, 'protected/p.txt'))).toThrow()
  })

  test('mid-batch of appends: the log is valid, any torn tail is cut, and the conversation continues', async () => {
    const { home, workspace, sessionId } = await crashAt('mid-batch')
    const { result } = await resumeAndContinue(home, workspace, sessionId)
    expect(result?.reason).toBe('completed')
    const events = expectValidLog(logFile(home, sessionId))
    expect(events.filter((event) => event.type === 'turn/end').map((event) => event.data.reason)).toEqual([
      'interrupted',
      'completed',
    ])
  })
})

describe('the writer lease', () => {
  test('a second process cannot attach to a live session, and nothing is appended', async () => {
    const home = tempDir('dsh-lease-home-')
    const workspace = tempDir('dsh-lease-ws-')
    const run = startChild(home, workspace, 'mid-tool')
    const sessionId = await run.ready
    try {
      // The child may still be flushing what it logged around the tool's start: wait until its log is still.
      let before = readFileSync(logFile(home, sessionId), 'utf8')
      for (let settled = 0; settled < 3;) {
        await new Promise((resolve) => setTimeout(resolve, 100))
        const now = readFileSync(logFile(home, sessionId), 'utf8')
        settled = now === before ? settled + 1 : 0
        before = now
      }
      h = await bootComposition({ home, workspace, patch: PATCH })
      await expect(h.root.agents.resume(sessionId)).rejects.toThrow(
        new RegExp(`session ${sessionId} is held by another dsh process \\(pid ${run.proc.pid} `),
      )
      expect(readFileSync(logFile(home, sessionId), 'utf8')).toBe(before)
    } finally {
      run.proc.kill('SIGKILL')
      await run.exited
    }
  })

  test('a torn last line is cut on resume', async () => {
    h = await bootComposition({ patch: PATCH })
    h.root.scriptedLlm.enqueue({ text: 'one' }, { text: 'two' })
    await h.run('first')
    const first = await h.agent()
    const id = first.session.id
    await first.dispose()
    const file = logFile(h.home, id)
    const intact = readFileSync(file, 'utf8')
    ;(await import('node:fs')).appendFileSync(file, '{"type":"assistant/chunk","seq":99,"ti')
    const agent = await h.root.agents.resume(id)
    expect(readFileSync(file, 'utf8').startsWith(intact)).toBe(true)
    agent.followup('second')
    await agent.whenIdle()
    expectValidLog(file)
  })
})
