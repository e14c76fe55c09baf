// Installs and builds dsh on a machine that has only Node 20.19+ and npm: pnpm at the pinned version,
// the workspace (native addons built against this Node's own headers when they are installed locally),
// then `tsc -b`, the package build steps and the bundled launcher. Safe to rerun: every step is incremental.
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { repo } from './lib.mjs'

const [major, minor] = process.versions.node.split('.').map(Number)
if (major < 20 || (major === 20 && minor < 19)) {
  console.error(`dsh needs Node 20.19 or newer (this is ${process.version})`)
  process.exit(1)
}

const pinned = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')).packageManager.split('@')[1]
const pnpmVersion = () =>
  spawnSync('pnpm', ['--version'], { encoding: 'utf8', shell: process.platform === 'win32' }).stdout?.trim()
if (pnpmVersion() !== pinned) {
  console.error(`setup: installing pnpm ${pinned} with npm`)
  execFileSync('npm', ['install', '--global', '--save-exact', `pnpm@${pinned}`], {
    stdio: 'inherit',
    shell: process.platform === 'win32',
  })
}

const env = { ...process.env }
// node-gyp downloads headers unless told where they are; a Node installed with its headers has them here.
const prefix = dirname(dirname(process.execPath))
if (!env.npm_config_nodedir && existsSync(join(prefix, 'include/node/node.h'))) env.npm_config_nodedir = prefix

const step = (title, command, args) => {
  const started = Date.now()
  const result = spawnSync(command, args, { cwd: repo, env, stdio: 'inherit', shell: process.platform === 'win32' })
  if (result.status !== 0) {
    console.error(`setup: ${title} failed (exit ${result.status})`)
    process.exit(result.status ?? 1)
  }
  console.error(`setup: ${title} done in ${((Date.now() - started) / 1000).toFixed(1)} s`)
}

step('install', 'pnpm', ['install', '--frozen-lockfile', '--reporter=append-only'])
step('build', 'pnpm', ['run', '--silent', 'build'])
step('web app', 'pnpm', ['--filter', '@dsh/web-app', 'run', '--silent', 'build'])
// The checkout's launcher (apps/cli/bin/dsh.js) starts from this bundle, as the installed package does; rebuilt only
// when one of its inputs changed (.agents/notes/implemented/decision/2026-12-02-one-launcher.md).
step('launcher bundle', process.execPath, ['scripts/bundle-cli.mjs', '--if-stale'])
