import { existsSync, statSync } from 'node:fs'
import { dirname, sep } from 'node:path'
import type { PathAuthority } from '@dsh/sandbox'
import { expandRule } from '@dsh/sandbox-rules'
import { BRIDGE_SCRIPTS, INNER_PROXY_SOCKET, NO_PROXY_VARIABLES, PROXY_VARIABLES } from './network.ts'

/** The network of one command: the host's, none (a private namespace), or the proxy bridged on `port`. */
export type BubblewrapNetwork = { kind: 'host' } | { kind: 'none' } | { kind: 'proxy'; socket: string; port: number }

export interface BubblewrapPlan {
  /** Writable roots, absolute and resolved; empty in read-only. */
  writableRoots: string[]
  /** Folders bound read-only over the private /tmp before the writable roots (absolute, resolved, existing). */
  readableRoots?: string[]
  cwd: string
  terminal: boolean
  network: BubblewrapNetwork
  /** Secret paths to hide and protected paths to bind read-only, and the most paths one glob expands to (absent: none). */
  pathRules?: { paths: PathAuthority; matchLimit: number }
}

const within = (path: string, root: string) => path === root || path.startsWith(root.endsWith(sep) ? root : root + sep)

/**
 * bwrap arguments for one command. The whole host is bound read-only, /dev and /proc are fresh, /tmp is a
 * private tmpfs, then each writable root is bound read-write over it. The cwd is re-exposed read-only when
 * it lives under /tmp (the private /tmp would hide it) and no writable root covers it. Order matters:
 * later mounts cover earlier ones.
 */
export function bubblewrapArgs(plan: BubblewrapPlan): string[] {
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp']
  const hiddenByTmp = plan.cwd !== '/tmp' && within(plan.cwd, '/tmp')
  if (hiddenByTmp && !plan.writableRoots.some((root) => within(plan.cwd, root))) args.push('--ro-bind', plan.cwd, plan.cwd)
  for (const root of plan.readableRoots ?? []) args.push('--ro-bind', root, root)
  for (const root of plan.writableRoots) args.push('--bind', root, root)
  if (plan.pathRules) args.push(...pathRuleArgs(plan.pathRules.paths, plan.writableRoots, plan.pathRules.matchLimit))
  // Own pid namespace: when bwrap dies (--die-with-parent follows ours), everything inside dies with it.
  args.push('--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try')
  args.push(...networkArgs(plan.network))
  // As root bubblewrap keeps every capability, so `mount -o remount,bind,rw /` would undo the read-only binds
  // (and free a command from its cgroup limits: docs/security.md, "Resource limits"). Unprivileged, it drops them already.
  args.push('--die-with-parent', '--cap-drop', 'ALL')
  // Without a terminal of its own, a new session leaves the command no controlling terminal to inject
  // keystrokes into (TIOCSTI). A private PTY stays the controlling terminal: its input is ours alone.
  if (!plan.terminal) args.push('--new-session')
  args.push('--chdir', plan.cwd)
  return args
}

const isDirectory = (path: string) => {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

/**
 * Mounts for the path rules, after the writable binds so they cover them (DESIGN §8):
 * - a protected path inside a writable root is bound read-only over itself; a missing one written as a
 *   directory (`.dsh/`) whose parent exists gets an empty read-only tmpfs, so it cannot be created (bwrap
 *   leaves the empty mount point behind on the disk);
 * - a secret directory becomes an empty read-only tmpfs and a secret file `/dev/null` (bound without device
 *   access, so reading it fails), last, so nothing re-exposes them; a secret path that holds a writable root
 *   is left visible (it is the workspace);
 * - then each read exception (the session's spill folder) is bound read-only again inside its hidden parent.
 */
export function pathRuleArgs(paths: PathAuthority, writableRoots: string[], limit: number): string[] {
  const args: string[] = []
  for (const rule of paths.protect) {
    const { found, missing } = expandRule(rule.pattern, limit)
    for (const path of found) if (writableRoots.some((root) => within(path, root))) args.push('--ro-bind', path, path)
    if (missing && rule.directory && writableRoots.some((root) => within(missing, root) && missing !== root) && isDirectory(dirname(missing))) {
      args.push('--tmpfs', missing, '--remount-ro', missing)
    }
  }
  const hidden: string[] = []
  const remounts: string[] = []
  for (const rule of paths.denyRead) {
    for (const path of expandRule(rule.pattern, limit).found) {
      if (hidden.includes(path) || writableRoots.some((root) => within(root, path))) continue
      hidden.push(path)
      if (isDirectory(path)) {
        args.push('--tmpfs', path)
        remounts.push('--remount-ro', path)
      } else args.push('--ro-bind', '/dev/null', path)
    }
  }
  // Exceptions are bound while the tmpfs above them is still writable (bwrap makes their mount points there).
  for (const exception of paths.readExceptions) {
    if (existsSync(exception) && isDirectory(exception) && hidden.some((path) => within(exception, path) && exception !== path)) args.push('--ro-bind', exception, exception)
  }
  return [...args, ...remounts]
}

/**
 * A private network namespace (only its own loopback) unless the host's network is asked for. With the
 * proxy, its socket is bound into the private /tmp, the bridge scripts are re-exposed (in case /tmp hid it),
 * and the proxy variables point at the bridge on the namespace's loopback.
 */
function networkArgs(network: BubblewrapNetwork): string[] {
  if (network.kind === 'host') return []
  if (network.kind === 'none') return ['--unshare-net']
  const url = `http://127.0.0.1:${network.port}`
  return [
    '--unshare-net',
    '--bind',
    network.socket,
    INNER_PROXY_SOCKET,
    ...Object.values(BRIDGE_SCRIPTS).flatMap((script) => ['--ro-bind', script, script]),
    ...PROXY_VARIABLES.flatMap((name) => ['--setenv', name, url]),
    ...NO_PROXY_VARIABLES.flatMap((name) => ['--unsetenv', name]),
  ]
}
