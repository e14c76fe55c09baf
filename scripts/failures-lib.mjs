// What failed in a vitest run, as short blocks for the end of the test log (scripts/test-all.mjs): the file, the
// test's full name and the first lines of its error. A CI log is read from its end, and the per-file coverage
// table printed after the tests would otherwise push the failure hundreds of lines up.
import { relative } from 'node:path'
import { stripVTControlCharacters } from 'node:util'
import { repo } from './lib.mjs'

/** Lines of each failure message kept (the assertion and the first frames; the run log above has the rest). */
export const FAILURE_LINES = 25

/** A stack frame inside node_modules or Node itself: the test's own frames are the ones that say where. */
const libraryFrame = (line) => /^\s*at /.test(line) && /node_modules|node:internal|\(<anonymous>\)/.test(line)

// vitest's messages carry colour codes when it thinks it has a terminal.
const firstLines = (message) =>
  stripVTControlCharacters(message)
    .split('\n')
    .filter((line) => !libraryFrame(line))
    .filter((line, index, lines) => line.trim() || (index > 0 && lines[index - 1].trim()))
    .slice(0, FAILURE_LINES)
    .map((line) => `    ${line}`)
    .join('\n')

/**
 * One block per failed test of vitest's JSON report, and one per file that failed with no failed test (it did
 * not load, or an error escaped its tests).
 */
export function failuresOf(report, root = repo) {
  const blocks = []
  for (const file of report.testResults ?? []) {
    const name = relative(root, file.name)
    const failedTests = (file.assertionResults ?? []).filter((test) => test.status === 'failed')
    for (const test of failedTests)
      blocks.push(
        `FAIL ${name} > ${test.fullName}\n${firstLines((test.failureMessages ?? []).join('\n') || '(no message)')}`,
      )
    if (!failedTests.length && file.status === 'failed')
      blocks.push(`FAIL ${name} (the file failed outside its tests)\n${firstLines(file.message || '(no message)')}`)
  }
  return blocks
}
