import { expect, test } from 'vitest'
import { asksForRunLines } from './run-argv.ts'

test('--json before any `--` asks for run lines, unless the first word is a command with its own output', () => {
  expect(asksForRunLines(['--json', 'fix it'])).toBe(true)
  expect(asksForRunLines(['--json'])).toBe(true) // no task: still a run
  expect(asksForRunLines(['resume', 'id', '--json', '--bogus'])).toBe(true)
  expect(asksForRunLines(['--json', '--bogus'])).toBe(true)
  expect(asksForRunLines(['fix it'])).toBe(false)
  expect(asksForRunLines(['--', '--json'])).toBe(false) // a task word, not a flag
  for (const word of ['sessions', 'grants', 'usage', 'mcp', 'rewind', 'prompt', 'eval', 'ralph'])
    expect(asksForRunLines(['--json', word, 'list'])).toBe(false)
})
