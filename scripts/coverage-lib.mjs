// Per-file test coverage of the product packages (no threshold: a map of where tests are thin, not a gate).
// Shared by `npm run coverage` (which writes it to docs/quality.md) and `DSH_TEST_COVERAGE=1 npm test` (which
// prints it). Product packages are the workspace packages whose `dsh.role` is not test-support, bench
// or bundle (no code), and not apps/web (a browser bundle the Node runs of vitest do not load).
import { readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { repo, workspacePackages } from './lib.mjs'

const NOT_PRODUCT = new Set(['test-support', 'bench', 'bundle'])
/** How many of the least-covered files the report names. */
export const LEAST_COVERED = 15

/** The vitest arguments that collect V8 coverage of the product packages into `reports`. */
export function coverageArgs(reports) {
  const products = workspacePackages().filter((pkg) => (pkg.rel.startsWith('packages/') && !NOT_PRODUCT.has(pkg.manifest.dsh?.role)) || pkg.rel === 'apps/cli')
  return [
    '--coverage.enabled',
    '--coverage.provider=v8',
    '--coverage.reporter=json-summary',
    `--coverage.reportsDirectory=${reports}`,
    ...products.map((pkg) => `--coverage.include=${pkg.rel}/src/**/*.ts`),
    '--coverage.exclude=**/*.test.ts',
    '--coverage.exclude=**/test-support/**',
  ]
}

/** The report vitest wrote into `reports`: total and rows (by file), least covered first in `least`. */
export function readCoverage(reports) {
  const summary = JSON.parse(readFileSync(join(reports, 'coverage-summary.json'), 'utf8'))
  const rows = Object.entries(summary)
    .filter(([file]) => file !== 'total')
    .map(([file, data]) => ({ file: relative(repo, file), ...data }))
    .sort((a, b) => a.file.localeCompare(b.file))
  const least = rows
    .filter((row) => row.lines.total > 0)
    .sort((a, b) => a.lines.pct - b.lines.pct || b.lines.total - a.lines.total)
    .slice(0, LEAST_COVERED)
  return { total: summary.total, rows, least }
}

export const pct = (metric) => (metric.total ? `${metric.pct.toFixed(1)} %` : '–')

/** The report as Markdown: the total, the least-covered files, then every file. */
export function renderCoverage({ total, rows, least }) {
  return [
    `**Total**: lines ${pct(total.lines)}, branches ${pct(total.branches)}, functions ${pct(total.functions)} over ${total.lines.total.toLocaleString('en')} lines.`,
    '',
    `## The ${least.length} least-covered files (by lines)`,
    '',
    '| file | lines | of |',
    '|---|---|---|',
    ...least.map((row) => `| \`${row.file}\` | ${pct(row.lines)} | ${row.lines.total} |`),
    '',
    '## Every file',
    '',
    '| file | lines | branches | functions |',
    '|---|---|---|---|',
    ...rows.map((row) => `| \`${row.file}\` | ${pct(row.lines)} | ${pct(row.branches)} | ${pct(row.functions)} |`),
    '',
  ].join('\n')
}
