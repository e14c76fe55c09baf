// Per-file test coverage of the product packages (no threshold: a map of where tests are thin, not a gate).
// Shared by `npm run coverage` (which writes it to docs/quality.md) and `npm test` (which prints it at the end of
// every run). Product packages are the workspace packages whose `dsh.role` is not test-support, bench
// or bundle (no code), and not apps/web (a browser bundle the Node runs of vitest do not load).
import { readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { repo, workspacePackages } from './lib.mjs'

const NOT_PRODUCT = new Set(['test-support', 'bench', 'bundle'])
/** How many of the least-covered files the report names. */
export const LEAST_COVERED = 15

/**
 * The vitest arguments that collect V8 coverage of the product packages into `reports`. One brace glob each for
 * what is in and what is out: vitest matches every loaded script against `include` and `exclude` with
 * picomatch, compiling the patterns again for each file, so a glob per product package (119 of them) spent
 * 77 s of the coverage step's 92 s on a 20-file run (measured 2026-12-01; .agents/notes/implemented/decision/
 * 2026-12-01-coverage-in-every-run.md).
 */
export function coverageArgs(reports) {
  const others = workspacePackages().filter(
    (pkg) => pkg.rel.startsWith('packages/') && NOT_PRODUCT.has(pkg.manifest.dsh?.role),
  )
  return [
    '--coverage.enabled',
    '--coverage.provider=v8',
    '--coverage.reporter=json-summary',
    `--coverage.reportsDirectory=${reports}`,
    // A failing test still leaves the map in the run log.
    '--coverage.reportOnFailure',
    // Every workspace package under packages/ (pnpm-workspace.yaml) and the CLI, less the ones that are not product.
    '--coverage.include={packages/*/*,apps/cli}/src/**/*.ts',
    '--coverage.exclude=**/*.test.ts',
    '--coverage.exclude=**/test-support/**',
    ...(others.length ? [`--coverage.exclude={${others.map((pkg) => pkg.rel).join(',')}}/**`] : []),
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

/** The group a covered file belongs to: `packages/<group>` (surfaces, acp, sdk, …) or the app (`apps/cli`). */
const groupOf = (file) => file.split('/').slice(0, 2).join('/')

/** Line coverage summed per group, largest group first: what issue #28's "above 70 % of lines" is read from. */
export function coverageByGroup(rows) {
  const groups = new Map()
  for (const row of rows) {
    const group = groupOf(row.file)
    const sum = groups.get(group) ?? { group, files: 0, total: 0, covered: 0 }
    sum.files++
    sum.total += row.lines.total
    sum.covered += row.lines.covered
    groups.set(group, sum)
  }
  return [...groups.values()]
    .map((sum) => ({ ...sum, pct: sum.total ? (100 * sum.covered) / sum.total : 0 }))
    .sort((a, b) => b.total - a.total || a.group.localeCompare(b.group))
}

/** The report as Markdown: the total, the least-covered files, then every file. */
export function renderCoverage({ total, rows, least }) {
  return [
    `**Total**: lines ${pct(total.lines)}, branches ${pct(total.branches)}, functions ${pct(total.functions)} over ${total.lines.total.toLocaleString('en')} lines.`,
    '',
    '## By group (lines)',
    '',
    '| group | lines | covered | of | files |',
    '|---|---|---|---|---|',
    ...coverageByGroup(rows).map(
      (sum) => `| \`${sum.group}\` | ${pct(sum)} | ${sum.covered} | ${sum.total} | ${sum.files} |`,
    ),
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
