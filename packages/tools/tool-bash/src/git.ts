import { readFileSync, realpathSync, statSync } from 'node:fs'
import { isAbsolute, join, resolve } from 'node:path'
import type { SandboxAuthority } from '@dsh/sandbox'
import { ToolError } from '@dsh/tools'

// `writeGit: true` (docs/security.md): `.git` is protected (read-only) inside the writable roots, because git runs
// its hooks and obeys its config unconfined the next time the user runs it. A command that must commit asks
// for approval to run with `.git` writable; everything else stays as confined as the session's mode says.

/** The protect rules that make a repository's `.git` read-only (`.git`, `.git/`, `.git/hooks`, …). */
const isGitRule = (rule: string) => /^\.git(\/|$)/.test(rule.trim())

/** Why the call needs approval for a writable `.git`, or undefined when it does not ask for one. */
export function writeGitReason(args: { writeGit?: boolean; justification?: string }): string | undefined {
  if (!args.writeGit) return undefined
  if (!args.justification?.trim())
    throw new ToolError(
      'INVALID_ARGS',
      '`writeGit: true` needs a `justification` saying why the command must change .git (e.g. "commit the fix")',
    )
  return `it asks to run with .git writable (git hooks and config there run unconfined the next time you use git): ${args.justification.trim()}`
}

/**
 * Where a worktree's or submodule's `.git` file points: its git directory and the common one it shares,
 * which must be writable too for a commit to land (they usually lie outside the workspace).
 */
function linkedGitDirs(dir: string): string[] {
  const dotGit = join(dir, '.git')
  try {
    if (!statSync(dotGit).isFile()) return []
    const line = readFileSync(dotGit, 'utf8')
      .split('\n')
      .find((text) => text.startsWith('gitdir:'))
    if (!line) return []
    const gitDir = realpathSync(resolve(dir, line.slice('gitdir:'.length).trim()))
    const dirs = [gitDir]
    try {
      const common = readFileSync(join(gitDir, 'commondir'), 'utf8').trim()
      dirs.push(realpathSync(isAbsolute(common) ? common : resolve(gitDir, common)))
    } catch {
      // not a worktree: no common directory
    }
    return dirs
  } catch {
    return []
  }
}

/** The call's authority with `.git` writable: the `.git` protect rules lifted, a linked git directory added as a root. */
export function withWritableGit(authority: SandboxAuthority, cwd: string): SandboxAuthority {
  if (authority.mode !== 'workspace-write') return authority
  const roots = [...authority.writableRoots]
  for (const root of [cwd, ...authority.writableRoots])
    for (const dir of linkedGitDirs(root)) if (!roots.includes(dir)) roots.push(dir)
  const paths = authority.paths && {
    ...authority.paths,
    protect: authority.paths.protect.filter((rule) => !isGitRule(rule.rule)),
  }
  return { ...authority, writableRoots: roots, ...(paths ? { paths } : {}) }
}

/** A note for a command that failed on the read-only `.git`, saying how to ask for it. */
export function readOnlyGitHint(output: string): string | undefined {
  if (
    !/\.git\b[^\n]*(Read-only file system|Permission denied)|(Read-only file system|Permission denied)[^\n]*\.git\b/.test(
      output,
    )
  )
    return undefined
  return '[.git is read-only in the sandbox (git would later run its hooks and config unconfined). If this command must change the repository (commit, branch, tag), run it again with writeGit: true and a justification: the user is asked to approve that one call.]'
}
