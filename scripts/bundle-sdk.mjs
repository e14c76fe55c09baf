// Builds the TypeScript SDK (packages/sdk/sdk-client) into a self-contained npm package folder (default
// packages/sdk/sdk-client/pkg): one ES module with the workspace packages and libraries it uses inlined,
// and one bundled declaration file, so the packed `@dsh/sdk` has no dependencies at all (no `workspace:*`).
// It starts the runtime it finds (`DSH_BIN`, then `dsh` on PATH: the packed `dsh`). Needs `pnpm build`.
// Usage: node scripts/bundle-sdk.mjs [--out <dir>]
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { rolldown } from 'rolldown'
import { dts } from 'rolldown-plugin-dts'
import { repo } from './lib.mjs'

const sdkDir = join(repo, 'packages/sdk/sdk-client')
const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'))

/** The packed package.json: the workspace manifest less what only the workspace can resolve. */
function packageManifest(sdk) {
  const root = readJson(join(repo, 'package.json'))
  return {
    name: sdk.name,
    version: sdk.version,
    description: sdk.description,
    type: 'module',
    exports: { '.': { types: './dist/index.d.mts', default: './dist/index.mjs' } },
    types: './dist/index.d.mts',
    files: ['dist', 'README.md'],
    engines: { node: root.engines.node },
  }
}

export async function bundleSdk(out = join(sdkDir, 'pkg')) {
  const started = Date.now()
  if (!existsSync(join(sdkDir, 'dist/index.js')))
    throw new Error('bundle-sdk: packages/sdk/sdk-client/dist is missing: run `pnpm build` first')
  rmSync(out, { recursive: true, force: true })
  const build = await rolldown({
    input: { index: join(sdkDir, 'src/index.ts') },
    platform: 'node',
    cwd: sdkDir,
    // Sources (not dist) so the declaration bundler sees every type where it is written.
    resolve: { conditionNames: ['@dsh/source', 'import', 'node', 'default'] },
    plugins: [dts({ tsconfig: join(sdkDir, 'tsconfig.json'), resolve: true })],
    logLevel: 'warn',
    // The declaration bundler is most of the build's time by nature; its timing report is noise here.
    checks: { pluginTimings: false },
    onLog(level, log, handler) {
      // cordis augments its own Context with `declare module "./context"`; kept as written, it still
      // type-checks in a consumer (apps/cli/src/packaging.test.ts runs tsc on one).
      if (log.plugin === 'rolldown-plugin-dts:fake-js' && /declare module "\.\//.test(log.message)) return
      handler(level, log)
    },
  })
  await build.write({
    dir: join(out, 'dist'),
    format: 'esm',
    entryFileNames: '[name].mjs',
    chunkFileNames: '[name]-[hash].mjs',
    sourcemap: false,
  })
  await build.close()
  cpSync(join(sdkDir, 'README.md'), join(out, 'README.md'))
  writeFileSync(
    join(out, 'package.json'),
    `${JSON.stringify(packageManifest(readJson(join(sdkDir, 'package.json'))), null, 2)}\n`,
  )
  return { out, ms: Date.now() - started }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const at = process.argv.indexOf('--out')
  const result = await bundleSdk(at > 0 ? resolve(process.argv[at + 1]) : undefined)
  console.error(`bundle-sdk: ${relative(process.cwd(), result.out) || '.'} in ${result.ms} ms`)
}
