// Builds the app (type check, then `vite build` into dist/) when its inputs changed since the last build.
// `npm run setup` runs it on every setup, so an unchanged app costs a few stat calls, not a Vite build.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const inputs = [
  'src',
  'index.html',
  'vite.config.ts',
  'tsconfig.app.json',
  'package.json',
  '../../packages/host/web-protocol/src',
  '../../packages/session/session-view/src',
]
const stampFile = join(here, 'dist/.inputs')

function files(path) {
  const full = join(here, path)
  if (!existsSync(full)) return []
  if (!statSync(full).isDirectory()) return [full]
  return readdirSync(full, { recursive: true })
    .map((name) => join(full, String(name)))
    .filter((file) => statSync(file).isFile())
    .sort()
}

const hash = createHash('sha256')
for (const file of inputs.flatMap(files))
  hash.update(`${file}\0${readFileSync(file).length}\0`).update(readFileSync(file))
const digest = hash.digest('hex')
if (!process.argv.includes('--force') && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === digest) {
  console.error('web app: up to date')
  process.exit(0)
}

const run = (bin, args) => {
  const result = spawnSync(join(here, 'node_modules/.bin', bin), args, { cwd: here, stdio: 'inherit' })
  if (result.status !== 0) process.exit(result.status ?? 1)
}
run('tsc', ['-p', 'tsconfig.app.json'])
run('vite', ['build', '--logLevel', 'warn'])
writeFileSync(stampFile, digest)
