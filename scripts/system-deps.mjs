// The system packages the tests need (real bubblewrap, Chromium and ripgrep; DESIGN: real parts only).
// `npm test` calls this before anything else: as root with apt-get it installs what is missing; otherwise it
// stops at once with the exact command to run, so a run never spends minutes before failing on a missing tool.
import { spawnSync } from 'node:child_process'

const NEEDED = [
  { command: 'bwrap', debian: 'bubblewrap', why: 'the sandbox and escape tests' },
  { command: 'chromium', debian: 'chromium', why: 'the web app browser tests' },
  { command: 'rg', debian: 'ripgrep', why: 'the grep tool tests' },
]

const has = (command) => spawnSync('/bin/sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0

export function ensureSystemPackages() {
  const missing = NEEDED.filter((tool) => !has(tool.command))
  if (missing.length === 0) return
  const names = missing.map((tool) => tool.debian)
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
    const still = missing.filter((tool) => !has(tool.command))
    if (still.length) fail(still, 'apt-get finished but they are still not on PATH')
    return
  }
  fail(missing, 'they are not on PATH')
}

function fail(missing, reason) {
  const list = missing.map((tool) => `  ${tool.command} (${tool.debian}): ${tool.why}`).join('\n')
  const command =
    process.platform === 'linux' ? `sudo apt-get install -y ${missing.map((tool) => tool.debian).join(' ')}` : `install ${missing.map((tool) => tool.debian).join(', ')} with your package manager`
  console.error(`system: the tests need these, and ${reason}:\n${list}\nRun:\n  ${command}\nthen run npm test again.`)
  process.exit(1)
}
