import { accessSync, constants, existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { delimiter, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { DshError } from './errors.ts'

/** How to start the runtime: a program and its arguments (the SDK adds `--profile sdk` and patches). */
export interface RuntimeCommand {
  file: string
  args: string[]
}

/** This package sits at `packages/sdk/sdk-client/{src,dist}` in a dsh checkout: the launcher is four levels up. */
export const repositoryLauncher = fileURLToPath(new URL('../../../../apps/cli/bin/dsh.js', import.meta.url))

function onPath(name: string, path: string | undefined): string | undefined {
  for (const dir of (path ?? '').split(delimiter)) {
    if (!dir) continue
    const candidate = join(dir, name)
    try {
      accessSync(candidate, constants.X_OK)
      return candidate
    } catch {
      // not here: keep looking
    }
  }
  return undefined
}

/** Resolves a module specifier as this module would import it (Node's resolution from the SDK's own folder). */
export type Resolve = (specifier: string) => string

const resolveHere: Resolve = (specifier) => createRequire(import.meta.url).resolve(specifier)

/**
 * The launcher of a `dsh` package installed where this SDK resolves modules (`npm i dsh @dsh/sdk`):
 * its package.json's `bin.dsh`. Undefined when no `dsh` package resolves or it declares no launcher.
 */
export function siblingLauncher(resolve: Resolve = resolveHere): string | undefined {
  let manifestPath: string
  try {
    manifestPath = resolve('dsh/package.json')
  } catch {
    return undefined
  }
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as {
    name?: string
    bin?: string | Record<string, string>
  }
  const bin = typeof manifest.bin === 'string' ? manifest.bin : manifest.bin?.dsh
  if (manifest.name !== 'dsh' || !bin) return undefined
  const launcher = join(dirname(manifestPath), bin)
  return existsSync(launcher) ? launcher : undefined
}

/** A launcher script (`.js`/`.mjs`) runs under this Node; anything else is a program. */
function programOrScript(file: string): RuntimeCommand {
  return /\.m?js$/.test(file) ? { file: process.execPath, args: [file] } : { file, args: [] }
}

/**
 * Finds the runtime: the given command, else `$DSH_BIN` (a program, or a launcher script run by this Node),
 * else the `dsh` package installed beside this SDK (module resolution: the version a project pinned), else
 * `dsh` on PATH, else this checkout's launcher (run by this Node). The Python SDK (`dsh/runtime.py`) has
 * the same order without the package step. Throws RUNTIME_NOT_FOUND naming the places it looked that can
 * hold a runtime (the checkout launcher only inside a checkout).
 */
export function findRuntime(
  command: string[] | undefined,
  env: NodeJS.ProcessEnv = process.env,
  {
    resolve = resolveHere,
    checkoutLauncher = repositoryLauncher,
  }: { resolve?: Resolve; checkoutLauncher?: string } = {},
): RuntimeCommand {
  if (command?.length) {
    const [file, ...args] = command as [string, ...string[]]
    const resolved = file.includes('/') ? (existsSync(file) ? file : undefined) : onPath(file, env.PATH)
    if (!resolved)
      throw new DshError(
        'RUNTIME_NOT_FOUND',
        `cannot start the dsh runtime: the command "${file}" was not found${file.includes('/') ? '' : ' on PATH'}`,
      )
    return { file: resolved, args }
  }
  if (env.DSH_BIN) {
    if (!existsSync(env.DSH_BIN))
      throw new DshError(
        'RUNTIME_NOT_FOUND',
        `cannot start the dsh runtime: DSH_BIN is "${env.DSH_BIN}", which does not exist`,
      )
    return programOrScript(env.DSH_BIN)
  }
  const sibling = siblingLauncher(resolve)
  if (sibling) return programOrScript(sibling)
  const installed = onPath('dsh', env.PATH)
  if (installed) return { file: installed, args: [] }
  if (existsSync(checkoutLauncher)) return { file: process.execPath, args: [checkoutLauncher] }
  // Inside a checkout whose launcher is not built yet, that launcher is worth naming; elsewhere the path is meaningless.
  const checkout = existsSync(join(dirname(checkoutLauncher), '..', 'package.json'))
    ? `, and no launcher at ${checkoutLauncher} (run npm run setup)`
    : ''
  throw new DshError(
    'RUNTIME_NOT_FOUND',
    `cannot find the dsh runtime: DSH_BIN is not set, no "dsh" package resolves from the SDK (npm i dsh beside @dsh/sdk), no "dsh" on PATH${checkout}; install dsh or pass { command: [...] }`,
  )
}
