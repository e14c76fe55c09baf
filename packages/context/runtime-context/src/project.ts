import { join } from 'node:path'
import type { Context } from '@dsh/cordis'
import type {} from '@dsh/fs'
import type { SandboxAuthority } from '@dsh/sandbox'
import type { Config } from './config.ts'

const WANTED_SCRIPTS = ['test', 'check', 'lint', 'typecheck', 'build', 'format']
const MAKE_TARGETS = ['test', 'check', 'lint', 'build', 'fmt', 'format']

/** A file of the working directory as text, or undefined (absent, unreadable, too big for the fs). */
async function text(
  ctx: Context,
  cwd: string,
  name: string,
  authority: SandboxAuthority | undefined,
): Promise<string | undefined> {
  try {
    return (await ctx.fs.readText(join(cwd, name), { maxLines: 2000, ...(authority ? { authority } : {}) })).text
  } catch {
    return undefined
  }
}

/** The package manager a lock file names. */
async function runner(ctx: Context, cwd: string): Promise<string> {
  if (await ctx.fs.exists(join(cwd, 'pnpm-lock.yaml'))) return 'pnpm'
  if (await ctx.fs.exists(join(cwd, 'yarn.lock'))) return 'yarn'
  if ((await ctx.fs.exists(join(cwd, 'bun.lockb'))) || (await ctx.fs.exists(join(cwd, 'bun.lock')))) return 'bun'
  return 'npm'
}

/** The project's own commands for testing, checking and building, found in its manifest files. */
export async function projectCommands(
  ctx: Context,
  cwd: string,
  config: Config,
  authority: SandboxAuthority | undefined,
): Promise<string[]> {
  const found: string[] = []
  const pkg = await text(ctx, cwd, 'package.json', authority)
  if (pkg) {
    try {
      const scripts = (JSON.parse(pkg) as { scripts?: Record<string, unknown> }).scripts ?? {}
      const run = await runner(ctx, cwd)
      for (const name of WANTED_SCRIPTS) {
        const body = scripts[name]
        if (typeof body !== 'string') continue
        const shown = body.length > config.maxCommandChars ? `${body.slice(0, config.maxCommandChars)}…` : body
        found.push(`${run === 'npm' && name !== 'test' ? 'npm run' : run} ${name} (${shown})`)
      }
    } catch {
      found.push('package.json (not valid JSON)')
    }
  }
  const make = await text(ctx, cwd, 'Makefile', authority)
  if (make)
    for (const target of MAKE_TARGETS) if (new RegExp(`^${target}\\s*:`, 'm').test(make)) found.push(`make ${target}`)
  const pyproject = await text(ctx, cwd, 'pyproject.toml', authority)
  if (pyproject !== undefined)
    found.push(/\[tool\.pytest|pytest/.test(pyproject) ? 'pytest (pyproject.toml)' : 'python project (pyproject.toml)')
  if ((await text(ctx, cwd, 'Cargo.toml', authority)) !== undefined) found.push('cargo test, cargo build (Cargo.toml)')
  if ((await text(ctx, cwd, 'go.mod', authority)) !== undefined) found.push('go test ./..., go build ./... (go.mod)')
  return found
}

/** The top-level entries of `cwd`, hidden ones left out, folders marked with `/`, at most `max`. */
export async function overview(
  ctx: Context,
  cwd: string,
  max: number,
  authority: SandboxAuthority | undefined,
): Promise<string | undefined> {
  if (!max) return undefined
  let entries
  try {
    entries = await ctx.fs.list(cwd, authority ? { authority } : {})
  } catch {
    return undefined
  }
  const names = entries
    .filter((entry) => !entry.name.startsWith('.'))
    .map((entry) => (entry.type === 'directory' ? `${entry.name}/` : entry.name))
    .sort()
  if (!names.length) return '(empty)'
  return names.length > max ? `${names.slice(0, max).join(', ')} (and ${names.length - max} more)` : names.join(', ')
}
