// The system packages the tests need (real bubblewrap, Chromium, ripgrep, and a Python that builds wheels;
// AGENTS.md rule 7: real parts in tests).
// `npm test` calls this before anything else: as root with apt-get it installs what is missing; otherwise it
// stops at once with the exact command to run, so a run never spends minutes before failing on a missing tool.
import { spawnSync } from 'node:child_process'

const has = (command) => spawnSync('/bin/sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0
// The packaging test builds the Python SDK's wheel offline (no build backend download): a python3 on PATH or
// Debian's own must import these (apps/cli/src/packaging.test.ts picks the first that does).
const pythonBuildsWheels = () =>
  ['python3', '/usr/bin/python3'].some(
    (python) => spawnSync(python, ['-c', 'import setuptools, wheel, venv, pip'], { stdio: 'ignore' }).status === 0,
  )

const NEEDED = [
  { command: 'bwrap', debian: ['bubblewrap'], why: 'the sandbox and escape tests' },
  { command: 'chromium', debian: ['chromium'], why: 'the web app browser tests' },
  { command: 'rg', debian: ['ripgrep'], why: 'the grep tool tests' },
  {
    command: 'python3 (setuptools, wheel, venv, pip)',
    present: pythonBuildsWheels,
    debian: ['python3-setuptools', 'python3-wheel', 'python3-venv', 'python3-pip'],
    why: 'the Python SDK wheel test',
  },
]

const present = (tool) => (tool.present ? tool.present() : has(tool.command))

export function ensureSystemPackages() {
  const missing = NEEDED.filter((tool) => !present(tool))
  if (missing.length === 0) return
  const names = missing.flatMap((tool) => tool.debian)
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0
  if (process.platform === 'linux' && isRoot && has('apt-get')) {
    console.error(`system: installing ${names.join(', ')} with apt-get`)
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
    for (const args of [
      ['update', '-qq'],
      ['install', '-y', '-qq', ...names],
    ]) {
      const result = spawnSync('apt-get', args, { stdio: ['ignore', 'inherit', 'inherit'], env })
      if (result.status !== 0) fail(missing, `apt-get ${args[0]} failed (exit ${result.status})`)
    }
    const still = missing.filter((tool) => !present(tool))
    if (still.length) fail(still, 'apt-get finished but they are still not on PATH')
    return
  }
  fail(missing, 'they are not on PATH')
}

function fail(missing, reason) {
  const list = missing.map((tool) => `  ${tool.command} (${tool.debian.join(' ')}): ${tool.why}`).join('\n')
  const command =
    process.platform === 'linux'
      ? `sudo apt-get install -y ${missing.flatMap((tool) => tool.debian).join(' ')}`
      : `install ${missing.flatMap((tool) => tool.debian).join(', ')} with your package manager`
  console.error(`system: the tests need these, and ${reason}:\n${list}\nRun:\n  ${command}\nthen run npm test again.`)
  process.exit(1)
}
