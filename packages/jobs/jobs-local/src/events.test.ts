import { afterEach, expect, test } from 'vitest'
import { bootComposition, scriptedPatch, type Harness } from '@dsh/test-harness'
import type {} from './index.ts'

// The job kinds are declared by their schemas (issue #28.6): data of another shape is refused, naming the field.
let h: Harness
afterEach(async () => h?.dispose())

test('job events not of their schema are refused, naming the field', async () => {
  h = await bootComposition({ patch: scriptedPatch() })
  const session = await h.root.sessions.create({ cwd: h.workspace })
  const started = {
    jobId: 'j1',
    callId: 'c1',
    command: 'sleep 1',
    cwd: h.workspace,
    mode: 'workspace-write' as const,
    pid: 1,
  }
  expect(() => session.append('job/started', { ...started, mode: 'root' as never })).toThrow(
    'data.mode must be one of read-only, workspace-write, danger-full-access',
  )
  expect(() => session.append('job/started', { ...started, jobId: '' })).toThrow(
    'data.jobId must be a non-empty string',
  )
  const ended = { jobId: 'j1', reason: 'exited' as const, exitCode: 0, signal: null, outputChars: 0 }
  expect(() => session.append('job/ended', { ...ended, exitCode: 'zero' as never })).toThrow(
    'data.exitCode must be a whole number or null',
  )
  expect(() => session.append('job/ended', { ...ended, signal: 9 as never })).toThrow(
    'data.signal must be a string or null',
  )
  expect(() => session.append('job/lost', {} as never)).toThrow('data.jobId must be a string')
  expect(session.events.filter((event) => event.type.startsWith('job/'))).toEqual([])
  session.append('job/ended', { ...ended, exitCode: null, signal: 'SIGTERM' })
})
