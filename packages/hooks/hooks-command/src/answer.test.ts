import { expect, test } from 'vitest'
import { combine, readExit } from './answer.ts'

const exit0 = (stdout: string) => ({ exitCode: 0, stdout, stderr: '', timedOut: false })

test('JSON answers are read in the top-level, hookSpecificOutput and older decision forms', () => {
  expect(
    readExit('PreToolUse', exit0('{"permissionDecision":"deny","permissionDecisionReason":"no"}'), 60),
  ).toMatchObject({ decision: 'deny', permission: 'deny', reason: 'no' })
  expect(readExit('PreToolUse', exit0('{"hookSpecificOutput":{"permissionDecision":"ask"}}'), 60)).toMatchObject({
    decision: 'ask',
    permission: 'ask',
  })
  expect(readExit('PreToolUse', exit0('{"decision":"approve"}'), 60)).toMatchObject({ permission: 'allow' })
  expect(readExit('PreToolUse', exit0('{"decision":"block","reason":"r"}'), 60)).toMatchObject({
    decision: 'deny',
    permission: 'deny',
    reason: 'r',
  })
  expect(readExit('PostToolUse', exit0('{"decision":"block","reason":"r"}'), 60)).toMatchObject({
    decision: 'block',
    reason: 'r',
  })
  expect(readExit('Stop', exit0('{"continue":false}'), 60)).toMatchObject({
    decision: 'stop',
    stop: 'a hook asked to stop',
  })
  expect(readExit('PreToolUse', exit0('{"permissionDecision":"maybe"}'), 60)).toEqual({ decision: 'pass' })
})

test('plain stdout is context only where Claude Code reads it so; other exits are errors that do not block', () => {
  expect(readExit('UserPromptSubmit', exit0('hello\n'), 60)).toEqual({ decision: 'context', context: 'hello' })
  expect(readExit('PreToolUse', exit0('hello\n'), 60)).toEqual({ decision: 'pass' })
  expect(readExit('PreToolUse', exit0('{not json'), 60)).toEqual({ decision: 'pass' })
  expect(readExit('PreToolUse', { exitCode: 1, stdout: '', stderr: 'oops', timedOut: false }, 60)).toEqual({
    decision: 'error',
    reason: 'exit 1: oops',
  })
  expect(readExit('PreToolUse', { exitCode: 2, stdout: '', stderr: '', timedOut: false }, 60)).toMatchObject({
    decision: 'block',
  })
  expect(readExit('PreToolUse', { exitCode: null, stdout: '', stderr: '', timedOut: true }, 5)).toMatchObject({
    decision: 'error',
    failure: 'timed out after 5 s',
  })
})

test('answers combine deny > ask > allow, any block wins, the first updatedInput wins, every context is kept', () => {
  const outcome = combine(
    [
      { decision: 'allow', permission: 'allow', updatedInput: { a: 1 }, context: 'one' },
      { decision: 'ask', permission: 'ask', reason: 'check', updatedInput: { a: 2 } },
      { decision: 'block', reason: 'stop it', context: 'two' },
    ],
    (index) => `hook ${index}`,
  )
  expect(outcome).toEqual({
    permission: 'ask',
    permissionReason: 'check',
    updatedInput: { a: 1 },
    context: ['one', 'two'],
    blocked: 'stop it',
    failures: [],
  })
})
