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

/**
 * Finds the runtime: the given command, else `dsh` on PATH, else this checkout's launcher (run by this
 * Node). Throws RUNTIME_NOT_FOUND naming every place it looked.
 */
export function findRuntime(command: string[] | undefined, env: NodeJS.ProcessEnv = process.env): RuntimeCommand {
  if (command?.length) {
    const [file, ...args] = command as [string, ...string[]]
    const resolved = file.includes('/') ? (existsSync(file) ? file : undefined) : onPath(file, env.PATH)
    if (!resolved) throw new DshError('RUNTIME_NOT_FOUND', `cannot start the dsh runtime: the command "${file}" was not found${file.includes('/') ? '' : ' on PATH'}`)
    return { file: resolved, args }
  }
  const installed = onPath('dsh', env.PATH)
  if (installed) return { file: installed, args: [] }
  if (existsSync(repositoryLauncher)) return { file: process.execPath, args: [repositoryLauncher] }
  throw new DshError('RUNTIME_NOT_FOUND', `cannot find the dsh runtime: no "dsh" on PATH and no launcher at ${repositoryLauncher}; install dsh or pass { command: [...] }`)
}
