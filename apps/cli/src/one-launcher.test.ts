// The checkout's launcher starts from the bundle `npm run setup` and `pnpm build` make (apps/cli/bin/dsh.js,
// scripts/bundle-cli.mjs), and from dist when the bundle is missing or older than a file it was made from.
// What a process loaded is read from a module hook that lists every file URL it resolved.
import { spawnSync } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterAll, beforeAll, expect, test } from 'vitest'
// @ts-expect-error: plain JavaScript beside the bin, no declarations
import { INPUTS_FILE, launcherBundleIsFresh } from '../bin/freshness.js'
// @ts-expect-error: a script of the repository, no declarations
import { bundleCli } from '../../../scripts/bundle-cli.mjs'

const appDir = join(dirname(fileURLToPath(import.meta.url)), '..')
const repo = join(appDir, '../..')
let root: string
let copy: string

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'dsh-one-launcher-'))
  // A launcher folder of its own (bin beside dist and pkg, as in apps/cli), so the test never rebuilds the
  // checkout's bundle under other tests: bin/ copied, dist linked to the checkout's, pkg bundled here.
  copy = join(root, 'cli')
  cpSync(join(appDir, 'bin'), join(copy, 'bin'), { recursive: true })
  cpSync(join(appDir, 'package.json'), join(copy, 'package.json'))
  spawnSync('ln', ['-s', join(appDir, 'dist'), join(copy, 'dist')])
  spawnSync('ln', ['-s', join(appDir, 'node_modules'), join(copy, 'node_modules')])
  await bundleCli(join(copy, 'pkg'))
}, 120_000)
afterAll(() => rmSync(root, { recursive: true, force: true }))

/** The files a `node <bin> --version` resolved, listed by a module hook registered before the bin runs. */
function loadedBy(env: Record<string, string> = {}): string[] {
  const list = join(root, `loaded-${Date.now()}-${Math.random()}`)
  const hooks = join(root, 'hooks.mjs')
  writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs'\nexport async function resolve(specifier, context, next) {\n  const found = await next(specifier, context)\n  appendFileSync(${JSON.stringify(list)}, found.url + '\\n')\n  return found\n}\n`,
  )
  const register = join(root, 'register.mjs')
  writeFileSync(
    register,
    `import { register } from 'node:module'\nregister(${JSON.stringify(pathToFileURL(hooks).href)})\n`,
  )
  const result = spawnSync(
    process.execPath,
    ['--import', pathToFileURL(register).href, join(copy, 'bin/dsh.js'), '--version'],
    {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    },
  )
  expect(result.stderr).toBe('')
  expect(result.stdout).toMatch(/^dsh \d+\.\d+\.\d+\n$/)
  return readFileSync(list, 'utf8').trim().split('\n')
}

const fromBundle = (urls: string[]) => urls.some((url) => url.endsWith('/pkg/dist/dsh.mjs'))
const fromDist = (urls: string[]) =>
  urls.some((url) => url.endsWith('/apps/cli/dist/bin.js') || url.endsWith('/cli/dist/bin.js'))

test('a fresh bundle is what the checkout launcher runs: its entry, and no module of a package dist', () => {
  expect(launcherBundleIsFresh(join(copy, 'pkg'))).toBe(true)
  const urls = loadedBy()
  expect(fromBundle(urls)).toBe(true)
  expect(urls.filter((url) => url.includes('/packages/') && url.includes('/dist/'))).toEqual([])
})

test('DSH_LAUNCHER=dist runs the launcher from dist', () => {
  const urls = loadedBy({ DSH_LAUNCHER: 'dist' })
  expect(fromDist(urls)).toBe(true)
  expect(fromBundle(urls)).toBe(false)
})

test('`--if-stale` leaves a fresh bundle alone', () => {
  const before = statSync(join(copy, 'pkg/dist/dsh.mjs')).mtimeMs
  const fresh = spawnSync(
    process.execPath,
    [join(repo, 'scripts/bundle-cli.mjs'), '--if-stale', '--out', join(copy, 'pkg')],
    { encoding: 'utf8' },
  )
  expect(fresh.status, fresh.stderr).toBe(0)
  expect(fresh.stderr).toBe('')
  expect(statSync(join(copy, 'pkg/dist/dsh.mjs')).mtimeMs).toBe(before)
})

test('a bundle older than one of its inputs is not run, and `--if-stale` builds it again; a missing one is not run either', () => {
  const inputs = JSON.parse(readFileSync(join(copy, 'pkg', INPUTS_FILE), 'utf8')).inputs as Record<
    string,
    [number, number]
  >
  const input = Object.keys(inputs).find((file) => file.startsWith(join(repo, 'packages')) && file.includes('/dist/'))!
  const { atime, mtime } = statSync(input)
  try {
    // What `tsc -b` does to a rebuilt file: a new modification time (its contents are left as they are here).
    utimesSync(input, atime, new Date(mtime.getTime() + 1000))
    expect(launcherBundleIsFresh(join(copy, 'pkg'))).toBe(false)
    const urls = loadedBy()
    expect(fromBundle(urls)).toBe(false)
    expect(fromDist(urls)).toBe(true)
    const rebuilt = spawnSync(
      process.execPath,
      [join(repo, 'scripts/bundle-cli.mjs'), '--if-stale', '--out', join(copy, 'pkg')],
      { encoding: 'utf8' },
    )
    expect(rebuilt.status, rebuilt.stderr).toBe(0)
    expect(rebuilt.stderr).toContain('bundle-cli:')
    expect(fromBundle(loadedBy())).toBe(true)
  } finally {
    utimesSync(input, atime, mtime)
  }
  rmSync(join(copy, 'pkg'), { recursive: true, force: true })
  expect(fromDist(loadedBy())).toBe(true)
}, 120_000)
