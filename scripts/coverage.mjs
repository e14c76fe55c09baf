// Per-file test coverage of the product packages, written to docs/quality.md (no threshold: a map, not a gate).
// Usage: npm run coverage [-- <vitest args>]   e.g. `npm run coverage -- --project core/tools` for a part.
// Every package is a vitest project, so a full run lists every product file (never loaded: 0 %); a partial
// run lists the files of the projects it ran and whatever those loaded.
// Product packages are the workspace packages whose `dsh.role` is not test-support, bench or bundle (no code),
// and not apps/web (a browser bundle the Node runs of vitest do not load).
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { repo, workspacePackages } from './lib.mjs'

const NOT_PRODUCT = new Set(['test-support', 'bench', 'bundle'])
/** How many of the least-covered files the summary names. */
const LEAST_COVERED = 15

const products = workspacePackages().filter((pkg) => (pkg.rel.startsWith('packages/') && !NOT_PRODUCT.has(pkg.manifest.dsh?.role)) || pkg.rel === 'apps/cli')
const reports = mkdtempSync(join(tmpdir(), 'dsh-coverage-'))
const started = Date.now()
const args = [
  'run',
  '--coverage.enabled',
  '--coverage.provider=v8',
  '--coverage.reporter=json-summary',
  `--coverage.reportsDirectory=${reports}`,
  ...products.map((pkg) => `--coverage.include=${pkg.rel}/src/**/*.ts`),
  '--coverage.exclude=**/*.test.ts',
  '--coverage.exclude=**/test-support/**',
  ...process.argv.slice(2),
]
const run = spawnSync(join(repo, 'node_modules/.bin/vitest'), args, { cwd: repo, stdio: 'inherit' })
const seconds = Math.round((Date.now() - started) / 1000)
let summary
try {
  summary = JSON.parse(readFileSync(join(reports, 'coverage-summary.json'), 'utf8'))
} catch (error) {
  console.error(`coverage: vitest wrote no summary (exit ${run.status}): ${error.message}`)
  process.exit(run.status || 1)
} finally {
  rmSync(reports, { recursive: true, force: true })
}

const pct = (metric) => (metric.total ? `${metric.pct.toFixed(1)} %` : '–')
const rows = Object.entries(summary)
  .filter(([file]) => file !== 'total')
  .map(([file, data]) => ({ file: relative(repo, file), ...data }))
  .sort((a, b) => a.file.localeCompare(b.file))
const least = rows
  .filter((row) => row.lines.total > 0)
  .sort((a, b) => a.lines.pct - b.lines.pct || b.lines.total - a.lines.total)
  .slice(0, LEAST_COVERED)
const partial = process.argv.length > 2 ? ` (partial run: \`${process.argv.slice(2).join(' ')}\`)` : ''

const doc = [
  '# Test coverage',
  '',
  `Written by \`npm run coverage\` (${new Date().toISOString().slice(0, 10)}, ${seconds} s${partial}; vitest with V8 coverage). Per file of the`,
  'product packages, test files and test support left out; no threshold: it shows where tests are thin. Code run',
  'only inside a spawned `dsh` process (the end-to-end tests of the headless, SDK and ACP surfaces) is not counted.',
  `Tests ${run.status === 0 ? 'passed' : `failed (exit ${run.status}): the numbers below count only what ran`}.`,
  '',
  `**Total**: lines ${pct(summary.total.lines)}, branches ${pct(summary.total.branches)}, functions ${pct(summary.total.functions)} over ${summary.total.lines.total.toLocaleString('en')} lines.`,
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
writeFileSync(join(repo, 'docs/quality.md'), doc)
console.error(`coverage: docs/quality.md written (${rows.length} files, ${seconds} s)`)
process.exit(run.status ?? 1)
