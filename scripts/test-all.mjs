// The whole test command: the system packages tests need (installed when it can), gates, the test type check, every vitest project, then the Python SDK tests
// when Python is present. Ends with one "N passed, N failed" line over everything that ran.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { repo } from './lib.mjs'
import { ensureSystemPackages } from './system-deps.mjs'

ensureSystemPackages()

const run = (title, command, args, options = {}) => {
  console.error(`\n── ${title}`)
  const started = Date.now()
  const result = spawnSync(command, args, { cwd: repo, stdio: 'inherit', ...options })
  console.error(`── ${title}: ${result.status === 0 ? 'ok' : `failed (exit ${result.status})`} in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  return result.status === 0
}

let passed = 0
let failed = 0
const count = (ok) => (ok ? passed++ : failed++)

count(run('gates', process.execPath, ['scripts/gates.mjs']))
count(run('type check of tests', join(repo, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.tests.json']))

const report = join(mkdtempSync(join(tmpdir(), 'dsh-vitest-')), 'report.json')
const vitestOk = run('vitest', join(repo, 'node_modules/.bin/vitest'), ['run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...process.argv.slice(2)])
if (existsSync(report)) {
  const json = JSON.parse(readFileSync(report, 'utf8'))
  passed += json.numPassedTests
  failed += json.numFailedTests
  if (!vitestOk && json.numFailedTests === 0) failed++ // a suite that failed to load, or an unhandled error
  rmSync(join(report, '..'), { recursive: true, force: true })
} else if (!vitestOk) failed++

const python = join(repo, 'python')
if (existsSync(python) && spawnSync('python3', ['--version']).status === 0) {
  count(run('python unittest', 'python3', ['-m', 'unittest', 'discover', '-s', 'tests', '-t', '.'], { cwd: join(python, 'sdk') }))
}

console.log(`\n${passed} passed, ${failed} failed`)
process.exit(failed ? 1 : 0)
