import { existsSync, readdirSync, statSync } from 'node:fs'
import { dirname } from 'node:path'
import { within } from '@dsh/sandbox-rules'

// Missing protected paths (docs/security.md, "Protected names that do not exist yet"): a name such as
// `.husky` or `.mcp.json` that is not there yet is fenced by mounting an empty read-only folder on it, so no
// confined command can create it. bubblewrap must make that mount point on the disk first, in the user's
// workspace; `tidiedArgv` removes it again once the command has ended.

const isDirectory = (path: string) => {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

const isEmptyDirectory = (path: string) => {
  try {
    return statSync(path).isDirectory() && readdirSync(path).length === 0
  } catch {
    return false
  }
}

/**
 * Where a fence for the missing `path` is mounted: its first missing ancestor below a writable root (so
 * `.config/git` with no `.config` fences `.config`: bwrap would otherwise make every folder on the way), or
 * undefined when `path` lies in no writable root (the rest of the disk is read-only already) or is a root.
 * `ours` are mount points an earlier command of this process left (killed before it could remove them): an
 * empty folder among them counts as missing, so it is fenced and removed again.
 */
export function fencePoint(path: string, writableRoots: readonly string[], ours: ReadonlySet<string>): string | undefined {
  const root = writableRoots.find((candidate) => within(path, candidate) && path !== candidate)
  if (!root) return undefined
  let at = path
  while (dirname(at) !== root && !existsSync(dirname(at))) at = dirname(at)
  if (!isDirectory(dirname(at))) return undefined // a file on the way: nothing can be created beneath it
  if (existsSync(at) && !(ours.has(at) && isEmptyDirectory(at))) return undefined
  return at
}

/**
 * Runs bubblewrap's argv under a bash (outside the sandbox) that removes the mount points `fences` once it
 * has ended, unless another confined command still runs: each holds a shared lock on `lock` for its whole
 * life, and the folders are removed only under the exclusive lock. Removing a mount point from outside
 * detaches that mount in every namespace holding it (measured, Linux 6.18), which would open the fence of a
 * command still running; a process killed with SIGKILL releases its lock with its descriptors. Only empty
 * folders are removed (`rmdir`): nothing a person put there since. A lock that cannot be opened or taken
 * in time refuses the command (fail closed: no command runs whose fences another could remove).
 */
export function tidiedArgv(options: { bash: string; flock: string; lock: string; waitSeconds: number; fences: readonly string[] }, argv: readonly string[]): string[] {
  const script = [
    'lock=$1 flock=$2 wait=$3 n=$4; shift 4; fences=("${@:1:$n}"); shift "$n"',
    // A signal to the group ends bubblewrap (default action after exec); this shell waits and tidies.
    'trap : TERM INT HUP',
    // Unlocked, another command's tidying could remove this one's fences while it runs: then it does not run.
    'if ! { exec 9>>"$lock" && "$flock" -s -w "$wait" 9; } 2>/dev/null; then echo "dsh: the command was not run: the sandbox fence lock $lock cannot be taken" >&2; exit 126; fi',
    '"$@"; rc=$?',
    'if "$flock" -xn 9 2>/dev/null; then for p in "${fences[@]}"; do rmdir -- "$p" 2>/dev/null; done; fi',
    'exit $rc',
  ].join('\n')
  return [options.bash, '-c', script, 'dsh-fences', options.lock, options.flock, String(options.waitSeconds), String(options.fences.length), ...options.fences, ...argv]
}
