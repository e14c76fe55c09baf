import { expect, test } from 'vitest'
import { FAILURE_LINES, failuresOf } from './failures-lib.mjs'

const report = (testResults) => ({ testResults })

test('each failed test is named with its file and its error, colours removed; passing tests and files are not', () => {
  const blocks = failuresOf(
    report([
      {
        name: '/repo/packages/a/b/src/x.test.ts',
        status: 'failed',
        assertionResults: [
          {
            fullName: 'lists > keeps order',
            status: 'failed',
            failureMessages: [
              '\u001b[31mAssertionError\u001b[39m: expected 1 to be 2\n\n\n    at x.test.ts:3:5\n    at file:///repo/node_modules/@vitest/runner/dist/index.js:1:1\n    at new Promise (<anonymous>)',
            ],
          },
          { fullName: 'lists > passes', status: 'passed', failureMessages: [] },
        ],
      },
      {
        name: '/repo/packages/a/b/src/y.test.ts',
        status: 'passed',
        assertionResults: [{ fullName: 'fine', status: 'passed' }],
      },
    ]),
    '/repo',
  )
  expect(blocks).toEqual([
    'FAIL packages/a/b/src/x.test.ts > lists > keeps order\n    AssertionError: expected 1 to be 2\n    \n        at x.test.ts:3:5',
  ])
})

test('a file that failed with no failed test (it did not load) is named with its message; a long error is cut', () => {
  const long = Array.from({ length: 100 }, (_, i) => `line ${i}`).join('\n')
  const blocks = failuresOf(
    report([
      { name: '/repo/a.test.ts', status: 'failed', message: 'Cannot find module ./gone.ts', assertionResults: [] },
      {
        name: '/repo/b.test.ts',
        status: 'failed',
        assertionResults: [{ fullName: 'long', status: 'failed', failureMessages: [long] }],
      },
    ]),
    '/repo',
  )
  expect(blocks[0]).toBe('FAIL a.test.ts (the file failed outside its tests)\n    Cannot find module ./gone.ts')
  expect(blocks[1].split('\n')).toHaveLength(1 + FAILURE_LINES)
  expect(failuresOf(report([]))).toEqual([])
})
