import { expect, test } from 'vitest'
import { coverageByGroup, renderCoverage } from './coverage-lib.mjs'

const row = (file, covered, total) => ({
  file,
  lines: { total, covered, pct: total ? (100 * covered) / total : 100 },
  branches: { total: 0, covered: 0, pct: 100 },
  functions: { total: 0, covered: 0, pct: 100 },
})

test('line coverage is summed per group (packages/<group>, apps/cli), over lines not averaged over files', () => {
  const rows = [
    row('packages/acp/acp/src/a.ts', 90, 100),
    row('packages/acp/fs-acp/src/b.ts', 0, 100),
    row('packages/sdk/sdk-client/src/c.ts', 30, 40),
    row('packages/sdk/sdk-client/src/empty.ts', 0, 0),
    row('apps/cli/src/launcher.ts', 5, 10),
  ]
  expect(coverageByGroup(rows)).toEqual([
    { group: 'packages/acp', files: 2, total: 200, covered: 90, pct: 45 },
    { group: 'packages/sdk', files: 2, total: 40, covered: 30, pct: 75 },
    { group: 'apps/cli', files: 1, total: 10, covered: 5, pct: 50 },
  ])
  const total = {
    lines: { total: 250, covered: 125, pct: 50 },
    branches: row('x', 0, 0).branches,
    functions: row('x', 0, 0).functions,
  }
  expect(renderCoverage({ total, rows, least: [] })).toContain('| `packages/acp` | 45.0 % | 90 | 200 | 2 |')
})
