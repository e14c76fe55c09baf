// The whole test command: the system packages tests need (installed when it can), gates and the test type check
// (side by side), every vitest project with per-file coverage (DSH_TEST_COVERAGE=0 skips it), then the Python SDK
// tests when Python is present. Ends with one "N passed, N failed" line over everything that ran.
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { repo } from './lib.mjs'
import { coverageArgs, readCoverage, renderCoverage } from './coverage-lib.mjs'
import { failuresOf } from './failures-lib.mjs'
import { readProfiles, renderProfiles } from './file-profile.mjs'
import { ensureSystemPackages } from './system-deps.mjs'

ensureSystemPackages()

/** Steps that failed (gates, type check, vitest, coverage, Python), named again in the log's last block. */
const failedSteps = []

const run = (title, command, args, options = {}) => {
  console.error(`\n── ${title}`)
  const started = Date.now()
  const result = spawnSync(command, args, { cwd: repo, stdio: 'inherit', ...options })
  console.error(
    `── ${title}: ${result.status === 0 ? 'ok' : `failed (exit ${result.status})`} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  )
  if (result.status !== 0)
    failedSteps.push(`${title} (exit ${result.status}; its output is in the block headed "── ${title}")`)
  return result.status === 0
}

let passed = 0
let failed = 0
const count = (ok) => (ok ? passed++ : failed++)

/** Runs a command with its output held back, for a step that runs beside another one (printed when it ends). */
function runQuietly(title, command, args) {
  const started = Date.now()
  const child = spawn(command, args, { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (chunk) => (output += chunk))
  child.stderr.on('data', (chunk) => (output += chunk))
  return new Promise((resolve) => {
    child.on('error', (error) => (output += `${error.message}\n`))
    child.on('close', (status) => {
      console.error(`\n── ${title}`)
      if (output) process.stderr.write(output)
      console.error(
        `── ${title}: ${status === 0 ? 'ok' : `failed (exit ${status})`} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      )
      if (status !== 0) failedSteps.push(`${title} (exit ${status}; its output is in the block headed "── ${title}")`)
      resolve(status === 0)
    })
  })
}

// The test type check runs while the gates do (neither reads what the other writes): ~7 s of ~48 s back on 2 cores.
const typeCheck = runQuietly('type check of tests', join(repo, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.tests.json'])
count(run('gates', process.execPath, ['scripts/gates.mjs']))
count(await typeCheck)

const report = join(mkdtempSync(join(tmpdir(), 'dsh-vitest-')), 'report.json')
// Per-file V8 coverage is collected in every run and printed into the run log at the end (docs/quality.md keeps
// one such report): 1–4 % more CPU over the whole suite, whose time goes mostly to spawned processes that are
// not instrumented (.agents/notes/implemented/decision/2026-12-01-coverage-on-by-default.md). DSH_TEST_COVERAGE=0
// skips it for a quicker local run.
const coverage = process.env.DSH_TEST_COVERAGE === '0' ? undefined : mkdtempSync(join(tmpdir(), 'dsh-coverage-'))
// Each test file's CPU and dsh launches, written by scripts/file-profile-setup.mjs in the workers, printed at the end.
const profiles = mkdtempSync(join(tmpdir(), 'dsh-file-profile-'))
const vitestOk = run(
  'vitest',
  join(repo, 'node_modules/.bin/vitest'),
  [
    'run',
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${report}`,
    ...(coverage ? coverageArgs(coverage) : []),
    ...process.argv.slice(2),
  ],
  { env: { ...process.env, DSH_TEST_PROFILE_DIR: profiles } },
)
// What failed, repeated as the log's last block: a CI log is often read from its end, after the coverage table.
let failures = []
if (existsSync(report)) {
  const json = JSON.parse(readFileSync(report, 'utf8'))
  passed += json.numPassedTests
  failed += json.numFailedTests
  if (!vitestOk && json.numFailedTests === 0) failed++ // a suite that failed to load, or an unhandled error
  failures = failuresOf(json)
  rmSync(join(report, '..'), { recursive: true, force: true })
} else if (!vitestOk) failed++

if (coverage) {
  try {
    console.log(
      `\n── coverage of the product packages (per file; \`npm run coverage\` keeps it in docs/quality.md)\n\n${renderCoverage(readCoverage(coverage))}`,
    )
  } catch (error) {
    // The report is part of what a run delivers: a run that should have written one and did not fails, by name.
    console.error(`coverage: vitest wrote no summary: ${error.message}`)
    failedSteps.push(`coverage: vitest wrote no summary (${error.message})`)
    failed++
  } finally {
    rmSync(coverage, { recursive: true, force: true })
  }
}

const profiled = readProfiles(profiles)
rmSync(profiles, { recursive: true, force: true })
if (profiled.length) {
  console.log(
    `\n── the 30 test files with the most CPU (cpu = worker + children; worker = the vitest worker process while the file ran, imports included; children = processes it started and reaped by the file's end, their own children included; dsh = dsh processes the file started)\n\n${renderProfiles(profiled, repo)}`,
  )
}

const python = join(repo, 'python')
if (existsSync(python) && spawnSync('python3', ['--version']).status === 0) {
  count(
    run('python unittest', 'python3', ['-m', 'unittest', 'discover', '-s', 'tests', '-t', '.'], {
      cwd: join(python, 'sdk'),
    }),
  )
}

if (failedSteps.length || failures.length)
  console.log(`\n── what failed\n\n${[...failedSteps, ...failures].join('\n\n')}`)
console.log(`\n${passed} passed, ${failed} failed`)
process.exit(failed ? 1 : 0)
