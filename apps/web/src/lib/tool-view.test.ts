import { expect, test } from 'vitest'
import { commandEnding, outputAddsToError, preview, printedAddsToResult } from './tool-view.ts'

test('a command killed by a signal is reported as killed, not as a clean run', () => {
  expect(commandEnding('(no output)\n[Killed by SIGTERM]')).toBe('killed by SIGTERM')
})

test('a failing exit status is read from the notes after the output, whatever the output printed', () => {
  expect(commandEnding('FAILED 2 tests\n[Exit code 1]\n[Ran outside the sandbox, as approved.]')).toBe('exit 1')
  // Text in the output that looks like a note is not one: only the trailing bracketed lines are.
  expect(commandEnding('echo says [Exit code 3]\nall good')).toBeUndefined()
  expect(commandEnding('ok')).toBeUndefined()
})

test('a deadline is reported as timed out', () => {
  expect(
    commandEnding('partial\n[Timed out after 1000 ms: the command and every process it started were killed.]'),
  ).toBe('timed out')
})

test('a terminal preview keeps the last lines and a file preview the first, counting what is hidden', () => {
  const text = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join('\n')
  expect(preview(text, 24, 'tail')).toEqual({
    text: Array.from({ length: 24 }, (_, i) => `line ${i + 7}`).join('\n'),
    hidden: 6,
  })
  expect(preview(text, 24, 'head').text.split('\n').at(-1)).toBe('line 24')
  expect(preview('short', 24, 'tail')).toEqual({ text: 'short', hidden: 0 })
})

test('a failed call whose output only repeats its error shows the error once', () => {
  const error = { message: '"/w/missing.txt" does not exist. Find the right path with glob' }
  expect(outputAddsToError('"/w/missing.txt" does not exist. Find the right path with glob', error)).toBe(false)
  expect(outputAddsToError('partial output\n[Timed out after 10 ms]', { message: '[Timed out after 10 ms]' })).toBe(
    true,
  )
  expect(outputAddsToError('anything', undefined)).toBe(true)
  expect(outputAddsToError(undefined, undefined)).toBe(false)
})

test('what a cancelled command printed is in its result and is not shown again; a result without it leaves it shown', () => {
  const printed = 'first\nsecond\n'
  expect(
    printedAddsToResult(printed, 'first\nsecond\n[Interrupted: the call was cancelled and the command was killed.]'),
  ).toBe(false)
  expect(printedAddsToResult(printed, 'The call was cut when dsh stopped.')).toBe(true)
  expect(printedAddsToResult(printed, undefined)).toBe(true)
  expect(printedAddsToResult('  \n', 'anything')).toBe(false)
})
