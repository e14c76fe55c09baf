// A stash-like snapshot of a git workspace that never touches the user's index, stash or refs: a private
// copy of the index (so unchanged files are not re-hashed), `git add -A` into it, `git write-tree`. Only
// objects are written to the repository (unreachable, so git's gc removes them in time).
import { execFile } from 'node:child_process'
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'

/** Repository settings that would run programs or rewrite contents are turned off for these reads. */
const SAFE = ['-c', 'core.fsmonitor=false', '-c', 'core.hooksPath=/dev/null', '-c', 'core.untrackedCache=false']

export interface GitOptions {
  timeoutMs: number
}

async function git(cwd: string, args: string[], options: GitOptions, env: Record<string, string> = {}, input?: { file: string; text: string }): Promise<Buffer> {
  if (input) await writeFile(input.file, input.text, { mode: 0o600 })
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      [...SAFE, ...args],
      { cwd, encoding: 'buffer', timeout: options.timeoutMs, maxBuffer: 256 * 1024 * 1024, env: { ...process.env, GIT_OPTIONAL_LOCKS: '0', ...env } },
      (error, stdout, stderr) => (error ? reject(new Error(`git ${args[0]}: ${stderr.toString().trim() || error.message}`)) : resolve(stdout)),
    )
  })
}

export interface Workspace {
  /** The repository's top level. */
  root: string
  /** The workspace folder relative to the top level ('' at the top). */
  prefix: string
  index: string
}

/** The repository the folder is in, if any. */
export async function gitWorkspace(cwd: string, options: GitOptions): Promise<Workspace | undefined> {
  try {
    const [root, index] = (await git(cwd, ['rev-parse', '--path-format=absolute', '--show-toplevel', '--git-path', 'index'], options)).toString().trim().split('\n')
    return root && index ? { root, prefix: relative(root, cwd), index } : undefined
  } catch {
    return undefined
  }
}

/**
 * The tree of the workspace folder's files as they are now (tracked and untracked, ignored files left out).
 * Only paths `hashable` accepts are hashed: a secret path never becomes an object in the repository, where a
 * confined command could read it back with `git cat-file`.
 */
export async function snapshotTree(workspace: Workspace, options: GitOptions, hashable: (path: string) => boolean): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'dsh-checkpoint-index-'))
  const index = join(dir, 'index')
  try {
    await copyFile(workspace.index, index).catch(() => undefined) // a repository without commits has none
    const env = { GIT_INDEX_FILE: index, GIT_LITERAL_PATHSPECS: '1' }
    const listed = (await git(workspace.root, ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', workspace.prefix || '.'], options, env)).toString().split('\0')
    const paths = [...new Set(listed.filter((path) => path && hashable(join(workspace.root, path))))]
    if (paths.length) await git(workspace.root, ['add', '-A', '--pathspec-from-file=' + join(dir, 'paths'), '--pathspec-file-nul'], options, env, { file: join(dir, 'paths'), text: paths.join('\0') })
    return (await git(workspace.root, ['write-tree'], options, env)).toString().trim()
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

export interface TreeChange {
  /** Relative to the workspace folder. */
  path: string
  before?: { blob: string; mode: string }
  after?: { blob: string; mode: string }
}

const ZERO = /^0+$/

/** The files of the workspace folder that differ between two trees. */
export async function changedFiles(workspace: Workspace, before: string, after: string, options: GitOptions): Promise<TreeChange[]> {
  if (before === after) return []
  const out = (await git(workspace.root, ['diff-tree', '-r', '-z', '--no-renames', before, after, '--', workspace.prefix || '.'], options)).toString()
  const fields = out.split('\0')
  const changes: TreeChange[] = []
  for (let at = 0; at + 1 < fields.length; at += 2) {
    const [oldMode, newMode, oldBlob, newBlob] = fields[at]!.replace(/^:/, '').split(' ')
    const path = relative(workspace.prefix, fields[at + 1]!)
    changes.push({
      path,
      ...(oldBlob && !ZERO.test(oldBlob) ? { before: { blob: oldBlob, mode: oldMode! } } : {}),
      ...(newBlob && !ZERO.test(newBlob) ? { after: { blob: newBlob, mode: newMode! } } : {}),
    })
  }
  return changes
}

export async function blobSize(workspace: Workspace, blob: string, options: GitOptions): Promise<number> {
  return Number((await git(workspace.root, ['cat-file', '-s', blob], options)).toString().trim())
}

export async function readBlob(workspace: Workspace, blob: string, options: GitOptions): Promise<Buffer> {
  return git(workspace.root, ['cat-file', 'blob', blob], options)
}
