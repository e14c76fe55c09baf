// The shipped artifacts, as a user gets them: the bundled `dsh` (scripts/bundle-cli.mjs) and the TypeScript
// SDK (scripts/bundle-sdk.mjs) are packed with `npm pack`, installed together with npm into a fresh project
// outside the repository (`npm install <dsh.tgz> <sdk.tgz>`, as `npm i dsh @dsh/sdk`), and driven with only
// its node_modules/.bin and Node on PATH (the SDK: without even that), against the mock model server. One
// install is shared by every check (native addons build in it).
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
// @ts-expect-error plain ESM scripts without declarations
import { bundleCli } from '../../../scripts/bundle-cli.mjs'
// @ts-expect-error plain ESM scripts without declarations
import { bundleSdk } from '../../../scripts/bundle-sdk.mjs'

const repo = join(dirname(fileURLToPath(import.meta.url)), '../../..')
const INSTALL_TIMEOUT_MS = 15 * 60_000
/** A check that starts several processes (a compiler, a venv, the runtime): slow on a loaded 2-core machine. */
const SLOW_CHECK_MS = 180_000
const root = mkdtempSync(join(tmpdir(), 'dsh-packaging-'))
const project = join(root, 'project')
const home = join(root, 'home')
const workspace = join(root, 'workspace')
// Only the project's installed programs and this Node: nothing of the checkout is reachable from them.
const NODE_ONLY_PATH = `${dirname(process.execPath)}:/usr/bin:/bin`
const PATH = `${join(project, 'node_modules/.bin')}:${NODE_ONLY_PATH}`
const installedDsh = join(project, 'node_modules/.bin/dsh')
let llm: MockServer
let cliTarball: string
let sdkTarball: string

/** A child run to its end without blocking this process (the mock server answers from here). */
function runChild(
  file: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(file, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => (stdout += chunk))
  child.stderr.on('data', (chunk) => (stderr += chunk))
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (status) => resolve({ status, stdout, stderr }))
  })
}

const npm = (args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) =>
  execFileSync('npm', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })

/**
 * better-sqlite3's install step takes a prebuilt addon from a local folder when given one (prebuild-install's
 * `local-prebuilds`): the one the workspace built against this Node, packed the way a release ships it, so
 * the test does not compile SQLite again (minutes on 2 cores). node-pty still builds from source here.
 */
function localPrebuilds(): string {
  const dir = join(root, 'prebuilds')
  mkdirSync(dir, { recursive: true })
  const manifest = JSON.parse(readFileSync(join(root, 'cli-pkg', 'package.json'), 'utf8'))
  const version = manifest.dependencies['better-sqlite3']
  const built = join(root, 'cli-pkg', 'node_modules', 'better-sqlite3')
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`
  execFileSync('tar', ['czf', join(dir, name), '-C', built, 'build/Release/better_sqlite3.node'])
  return dir
}

beforeAll(async () => {
  llm = await startMockServer()
  for (const dir of [project, home, workspace]) mkdirSync(dir, { recursive: true })
  await bundleCli(join(root, 'cli-pkg'))
  await bundleSdk(join(root, 'sdk-pkg'))
  cliTarball = join(root, npm(['pack', join(root, 'cli-pkg'), '--pack-destination', root, '--silent'], root).trim())
  sdkTarball = join(root, npm(['pack', join(root, 'sdk-pkg'), '--pack-destination', root, '--silent'], root).trim())
  const env = {
    npm_config_nodedir: dirname(dirname(process.execPath)),
    npm_config_better_sqlite3_local_prebuilds: localPrebuilds(),
    npm_config_update_notifier: 'false',
  }
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'outside-project', private: true, type: 'module' }),
  )
  npm(['install', '--prefer-offline', '--no-audit', '--no-fund', cliTarball, sdkTarball], project, env)
}, INSTALL_TIMEOUT_MS)

afterAll(async () => {
  await llm?.close()
  rmSync(root, { recursive: true, force: true })
})

const sdkName = (): string => JSON.parse(readFileSync(join(root, 'sdk-pkg', 'package.json'), 'utf8')).name
const runEnv = () => ({
  PATH,
  HOME: home,
  DSH_HOME: join(home, '.dsh'),
  DEEPSEEK_BASE_URL: llm.url,
  DEEPSEEK_API_KEY: 'packaging-test-key',
})

test('the packed dsh declares its native addons at exact versions and no workspace package', () => {
  const manifest = JSON.parse(execFileSync('tar', ['-xOzf', cliTarball, 'package/package.json'], { encoding: 'utf8' }))
  expect(manifest.name).toBe('dsh')
  expect(manifest.dependencies).toEqual({
    'better-sqlite3': expect.stringMatching(/^\d+\.\d+\.\d+$/),
    'node-pty': expect.stringMatching(/^\d+\.\d+\.\d+$/),
  })
  expect(JSON.stringify(manifest)).not.toContain('workspace:')
  const sdk = JSON.parse(execFileSync('tar', ['-xOzf', sdkTarball, 'package/package.json'], { encoding: 'utf8' }))
  expect(sdk).not.toHaveProperty('dependencies')
  expect(sdk.exports['.'].types).toBe('./dist/index.d.mts')
})

test(
  'the installed dsh prints its version and runs a scripted task against the mock server',
  async () => {
    const installed = installedDsh
    expect(spawnSync(installed, ['--version'], { env: runEnv(), encoding: 'utf8' }).stdout).toBe(
      `dsh ${JSON.parse(readFileSync(join(repo, 'apps/cli/package.json'), 'utf8')).version}\n`,
    )
    llm.reset()
    writeFileSync(join(workspace, 'notes.txt'), 'a line only the read tool can see\n')
    // The third answer is the session's title (the auxiliary request after a first turn).
    llm.enqueue(
      { toolCalls: [{ id: 'r1', name: 'read', arguments: { path: 'notes.txt' } }] },
      { text: 'Read it.' },
      { text: 'Reading the notes' },
    )
    const result = await runChild(installed, ['read notes.txt'], { cwd: workspace, env: runEnv() })
    expect(result.stderr).toBe('')
    expect(result.status).toBe(0)
    expect(result.stdout).toContain('Read it.')
    // The tool ran in the installed tree: its result reached the model in the second request.
    expect(llm.requests).toHaveLength(3)
    expect(JSON.stringify(llm.requests[1]!.body)).toContain('a line only the read tool can see')
    // The installed tree is the bundle: no workspace package was installed beside it (the SDK is the one @dsh).
    expect(readdirSync(join(project, 'node_modules/@dsh'))).toEqual(['sdk'])
  },
  SLOW_CHECK_MS,
)

test(
  'the installed dsh web serves the bundled app',
  async () => {
    const child = spawn(installedDsh, ['web', '--no-open', '--port', '0'], {
      cwd: workspace,
      env: runEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const exited = new Promise((resolve) => child.once('exit', resolve))
    try {
      let out = ''
      const link = await new Promise<URL>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`dsh web printed no link: ${out}`)), 40_000)
        child.stdout.on('data', (chunk) => {
          out += chunk
          const match = /(http:\/\/dsh:\S+\/auth\/link)\s/.exec(out)
          if (match) {
            clearTimeout(timer)
            resolve(new URL(match[1]!))
          }
        })
      })
      const signIn = await get(link, {
        authorization: `Basic ${Buffer.from(`${decodeURIComponent(link.username)}:${decodeURIComponent(link.password)}`).toString('base64')}`,
      })
      const cookie = String(signIn.headers['set-cookie']?.[0] ?? '').split(';')[0]!
      expect(cookie).not.toBe('')
      const page = await get(new URL('/', link.origin), { cookie })
      expect(page.status).toBe(200)
      expect(page.body).toContain('<div id="root">')
      const script = /src="(\/assets\/[^"]+\.js)"/.exec(page.body)![1]!
      expect((await get(new URL(script, link.origin), { cookie })).status).toBe(200)
    } finally {
      child.kill('SIGTERM')
      await exited
    }
  },
  SLOW_CHECK_MS,
)

test(
  'the SDK installed in an outside project type-checks and runs a session through the installed dsh',
  async () => {
    writeFileSync(
      join(project, 'main.ts'),
      [
        // The name the packed SDK declares (the program imports what the tarball installed).
        `import { Harness, type RunResult } from '${sdkName()}'`,
        `const harness = await Harness.start({ cwd: ${JSON.stringify(workspace)} })`,
        `try {`,
        `  const result: RunResult = await (await harness.session()).run('say hi')`,
        `  console.log(JSON.stringify({ text: result.text, reason: result.reason }))`,
        `} finally {`,
        `  await harness.close()`,
        `}`,
        ``,
      ].join('\n'),
    )
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          types: ['node'],
          typeRoots: [join(repo, 'node_modules/@types')],
        },
        files: ['main.ts'],
      }),
    )
    // A Node program's own @types/node (the checkout's copy; the SDK's declarations use Node's types).
    const tsc = spawnSync(process.execPath, [join(repo, 'node_modules/typescript/bin/tsc'), '-p', project], {
      encoding: 'utf8',
    })
    expect(tsc.stdout + tsc.stderr).toBe('')
    // Node 20 runs the same program as JavaScript (types stripped by hand: one annotation).
    writeFileSync(
      join(project, 'main.mjs'),
      readFileSync(join(project, 'main.ts'), 'utf8').replace(', type RunResult', '').replace(': RunResult', ''),
    )
    llm.reset()
    llm.enqueue({ text: 'hi from the SDK' })
    // No DSH_BIN and no dsh on PATH: the SDK finds the dsh installed beside it by module resolution.
    const run = await runChild(process.execPath, ['main.mjs'], {
      cwd: project,
      env: { ...runEnv(), PATH: NODE_ONLY_PATH },
    })
    expect(run.stderr).toBe('')
    expect(JSON.parse(run.stdout)).toEqual({ text: 'hi from the SDK', reason: 'completed' })
    expect(existsSync(join(project, 'node_modules', sdkName(), 'dist/index.d.mts'))).toBe(true)
  },
  SLOW_CHECK_MS,
)

/** A Python that can build a wheel offline (setuptools and wheel installed: pip cannot fetch a build backend here). */
function wheelBuilder(): string {
  for (const python of ['python3', '/usr/bin/python3']) {
    if (spawnSync(python, ['-c', 'import setuptools, wheel, venv'], { stdio: 'ignore' }).status === 0) return python
  }
  throw new Error(
    'no python3 with setuptools, wheel and venv: install them (Debian: apt-get install python3-setuptools python3-wheel python3-venv)',
  )
}

test(
  'the Python wheel installs into a fresh venv, ships py.typed, and finds the installed dsh on PATH',
  async () => {
    const python = wheelBuilder()
    const wheels = join(root, 'wheels')
    // Built from a copy: setuptools writes build/ and *.egg-info beside the sources it builds.
    const sources = join(root, 'python-sdk')
    cpSync(join(repo, 'python/sdk'), sources, {
      recursive: true,
      filter: (path) => !/__pycache__|\.egg-info$|\/build$/.test(path),
    })
    const build = spawnSync(
      python,
      ['-m', 'pip', 'wheel', '--no-deps', '--no-build-isolation', '--no-index', '-w', wheels, sources],
      { encoding: 'utf8', cwd: root },
    )
    expect(build.status, build.stderr).toBe(0)
    const [wheel] = readdirSync(wheels).filter((file) => file.endsWith('.whl'))
    expect(execFileSync('unzip', ['-l', join(wheels, wheel!)], { encoding: 'utf8' })).toContain('dsh/py.typed')
    // A fresh venv without its own pip (ensurepip alone takes a minute on 2 busy cores): the builder's pip installs into it.
    const venv = join(root, 'venv')
    execFileSync(python, ['-m', 'venv', '--without-pip', venv])
    execFileSync(
      python,
      [
        '-m',
        'pip',
        '--python',
        join(venv, 'bin/python'),
        'install',
        '--no-deps',
        '--no-index',
        '--quiet',
        join(wheels, wheel!),
      ],
      { cwd: root },
    )
    const typed = spawnSync(
      join(venv, 'bin/python'),
      ['-c', 'import dsh, pathlib; print(pathlib.Path(dsh.__file__).parent.joinpath("py.typed").exists())'],
      { cwd: root, encoding: 'utf8' },
    )
    expect(typed.stdout).toBe('True\n')
    llm.reset()
    llm.enqueue({ text: 'hello from python' })
    // The README's synchronous example, run outside the repository: the runtime is the `dsh` on PATH.
    const example = 'from dsh import SyncHarness\nwith SyncHarness() as h:\n    print(h.session().run("hello").text)\n'
    const run = await runChild(join(venv, 'bin/python'), ['-c', example], { cwd: workspace, env: runEnv() })
    expect(run.stderr).toBe('')
    expect(run.stdout).toBe('hello from python\n')
  },
  SLOW_CHECK_MS,
)

function get(
  url: URL,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, any>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname + url.search, headers: { host: url.host, ...headers } },
      (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (chunk) => (body += chunk))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
      },
    )
    req.on('error', reject)
    req.end()
  })
}
