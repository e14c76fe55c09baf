import { accessSync, constants, existsSync } from 'node:fs'
import { delimiter, join } from 'node:path'
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

/** A launcher script (`.js`/`.mjs`) runs under this Node; anything else is a program. */
function programOrScript(file: string): RuntimeCommand {
  return /\.m?js$/.test(file) ? { file: process.execPath, args: [file] } : { file, args: [] }
}

/**
 * Finds the runtime, in the Python SDK's order (`dsh/runtime.py`): the given command, else `$DSH_BIN` (a
 * program, or a launcher script run by this Node), else `dsh` on PATH, else this checkout's launcher (run
 * by this Node). Throws RUNTIME_NOT_FOUND naming every place it looked.
 */
export function findRuntime(command: string[] | undefined, env: NodeJS.ProcessEnv = process.env): RuntimeCommand {
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
  const installed = onPath('dsh', env.PATH)
  if (installed) return { file: installed, args: [] }
  if (existsSync(repositoryLauncher)) return { file: process.execPath, args: [repositoryLauncher] }
  throw new DshError(
    'RUNTIME_NOT_FOUND',
    `cannot find the dsh runtime: DSH_BIN is not set, no "dsh" on PATH and no launcher at ${repositoryLauncher}; install dsh or pass { command: [...] }`,
  )
}
