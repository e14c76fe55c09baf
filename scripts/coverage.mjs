// `npm run coverage [-- <vitest args>]`: the per-file coverage report (scripts/coverage-lib.mjs), written to
// docs/quality.md (`npm test` prints the same report at the end of every run log).
// e.g. `npm run coverage -- packages/core/tools/` for a part (only what those test files loaded is listed).
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { coverageArgs, readCoverage, renderCoverage } from './coverage-lib.mjs'
import { repo } from './lib.mjs'

const reports = mkdtempSync(join(tmpdir(), 'dsh-coverage-'))
const started = Date.now()
const run = spawnSync(
  join(repo, 'node_modules/.bin/vitest'),
  ['run', ...coverageArgs(reports), ...process.argv.slice(2)],
  { cwd: repo, stdio: 'inherit' },
)
const seconds = Math.round((Date.now() - started) / 1000)
let coverage
try {
  coverage = readCoverage(reports)
} catch (error) {
  console.error(`coverage: vitest wrote no summary (exit ${run.status}): ${error.message}`)
  process.exit(run.status || 1)
} finally {
  rmSync(reports, { recursive: true, force: true })
}
const partial = process.argv.length > 2 ? ` (partial run: \`${process.argv.slice(2).join(' ')}\`)` : ''
const doc = [
  '# Test coverage',
  '',
  `Written by \`npm run coverage\` (${new Date().toISOString().slice(0, 10)}, ${seconds} s${partial}): vitest with V8 coverage, the json-summary reporter`,
  "only, the product packages' `src` as one include glob (scripts/coverage-lib.mjs). Per file of the product packages,",
  'test files and test support left out; no threshold: it shows where tests are thin.',
  '',
  '**Not counted**: code that runs only inside a spawned `dsh` process (the end-to-end tests of the SDK and ACP',
  "surfaces, the tests of the process boundary). V8 coverage is taken in vitest's workers; the processes tests spawn",
  'are not instrumented, so those files read low here although tests run them. The headless tests run the launcher',
  'in their worker (`dshInProcess`, @dsh/test-harness), so the headless surface and the launcher are counted.',
  '',
  'Every `npm test` run (and so every CI run) collects it and prints this report (total, least-covered, every file) at',
  'the end of its log, for 1–4 % more CPU over the whole suite (`DSH_TEST_COVERAGE=0` skips it:',
  '`.agents/notes/implemented/decision/2026-12-01-coverage-on-by-default.md`).',
  '',
  `Tests ${run.status === 0 ? 'passed' : `failed (exit ${run.status}): the numbers below count only what ran`}.`,
  '',
  renderCoverage(coverage),
].join('\n')
// The suite's own measurements (where its time goes, before and after a change) are written by hand between
// these markers and kept when the coverage part is rewritten.
const docPath = join(repo, 'docs/quality.md')
const kept = existsSync(docPath)
  ? /<!-- suite-time -->[\s\S]*?<!-- \/suite-time -->/.exec(readFileSync(docPath, 'utf8'))?.[0]
  : undefined
writeFileSync(docPath, kept ? `${doc.trimEnd()}\n\n${kept}\n` : doc)
console.error(`coverage: docs/quality.md written (${coverage.rows.length} files, ${seconds} s)`)
process.exit(run.status ?? 1)
