import { platform, release } from 'node:os'
import { basename } from 'node:path'
import type { Context } from '@dsh/cordis'
import type { SandboxAuthority } from '@dsh/sandbox'
import type {} from '@dsh/sandbox-policy'
import type { Session } from '@dsh/session'
import type { Config } from './config.ts'
import { gitBranch, gitFacts } from './git.ts'
import { overview, projectCommands } from './project.ts'

/** What the model is told, and the stable facts whose change makes it worth telling again. */
export interface RuntimeContext {
  text: string
  facts: Record<string, string>
}

/** Where the context is gathered for: the sandbox mode to tell, and the read rules manifest files are read under. */
export interface GatherFor {
  mode?: string
  /** The session's secret-path rules, so a planted `package.json` linked to a key is read as the model's own reads would be. */
  authority?: SandboxAuthority
}

/** The mode and read rules of `session` (none without a sandbox policy). */
export async function sessionFor(ctx: Context, session: Session): Promise<GatherFor> {
  const policy = ctx.get('sandboxPolicy')
  if (!policy) return {}
  const mode = policy.mode(session)
  return { mode, authority: { mode, writableRoots: [], paths: policy.pathRules(await policy.writableRoots(session)) } }
}

/**
 * The stable facts alone (working directory, OS, date, shell, mode, branch): whether a new context is worth
 * logging. The branch costs one confined git; status, commits, overview and commands are left for
 * `gatherContext`, so a turn whose facts did not change gathers nothing more.
 */
export async function gatherFacts(
  ctx: Context,
  cwd: string,
  config: Config,
  where: GatherFor,
  now = new Date(),
): Promise<Record<string, string>> {
  const facts: Record<string, string> = { cwd }
  if (config.os) facts.os = `${platform()} ${release()}`
  if (config.date) facts.date = now.toISOString().slice(0, 10)
  if (config.shell) facts.shell = basename(process.env.SHELL ?? 'bash')
  if (config.sandbox && where.mode) facts.mode = where.mode
  const branch = config.git ? await gitBranch(ctx, cwd, config) : undefined
  if (branch) facts.branch = branch
  return facts
}

/**
 * Gathers the runtime context of a session working in `cwd` (`where`: its mode and read rules). The facts (working directory, OS, date, shell,
 * mode, branch) change rarely; the status, commits, overview and commands are told with them but do not by
 * themselves log a new context (they change with every edit). `known`: the facts just gathered.
 */
export async function gatherContext(
  ctx: Context,
  cwd: string,
  config: Config,
  where: GatherFor,
  now = new Date(),
  known?: Record<string, string>,
): Promise<RuntimeContext> {
  const facts = known ?? (await gatherFacts(ctx, cwd, config, where, now))
  const git = config.git && facts.branch ? await gitFacts(ctx, cwd, config, facts.branch) : undefined

  const lines = [
    `Runtime context (gathered by dsh when the session started or these facts changed; the files may have changed since):`,
    `- Working directory: ${cwd}`,
  ]
  const system = [
    facts.os && `OS: ${facts.os}`,
    facts.shell && `shell: ${facts.shell}`,
    facts.date && `date: ${facts.date}`,
  ].filter(Boolean)
  if (system.length) lines.push(`- ${system.join('; ')}`)
  if (facts.mode) lines.push(`- Sandbox mode: ${facts.mode}`)
  if (git) {
    lines.push(`- Git branch: ${git.branch}; status: ${git.status}`)
    if (git.commits.length) lines.push(`- Recent commits:`, ...git.commits.map((commit) => `  ${commit}`))
  } else if (config.git) lines.push('- Git: not a repository, or not readable here')
  const top = await overview(ctx, cwd, config.overview, where.authority)
  if (top) lines.push(`- Top level: ${top}`)
  if (config.commands) {
    const commands = await projectCommands(ctx, cwd, config, where.authority)
    lines.push(
      commands.length
        ? `- Project commands: ${commands.join('; ')}`
        : '- Project commands: none found (no package.json scripts, Makefile, pyproject.toml, Cargo.toml or go.mod)',
    )
  }
  return { text: lines.join('\n'), facts }
}
