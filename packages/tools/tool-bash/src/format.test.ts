import { expect, test } from 'vitest'
import type { ShellResult } from '@dsh/shell'
import { formatResult } from './format.ts'

const killed: ShellResult = {
  exitCode: null,
  signal: 'SIGTERM',
  output: 'half done\n',
  truncated: false,
  timedOut: false,
  aborted: true,
  enforcement: 'full',
  durationMs: 1200,
}

test('a command cut because dsh stopped says so, and a cancelled one says it was cancelled', () => {
  const stopped = formatResult(killed, { timeoutMs: 120_000, unconfined: false, stopped: true })
  const cancelled = formatResult(killed, { timeoutMs: 120_000, unconfined: false })
  expect(typeof stopped === 'object' && stopped.error).toEqual({
    code: 'ABORTED',
    message: 'Interrupted: dsh stopped and the command was killed (SIGTERM).',
  })
  expect(typeof cancelled === 'object' && cancelled.error).toEqual({
    code: 'ABORTED',
    message: 'Interrupted: the call was cancelled and the command was killed (SIGTERM).',
  })
  expect(typeof stopped === 'object' && stopped.content[0]).toMatchObject({
    text: 'half done\n[Interrupted: dsh stopped and the command was killed (SIGTERM).]',
  })
})
