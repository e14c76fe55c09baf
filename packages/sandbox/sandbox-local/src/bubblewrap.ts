import { existsSync, statSync } from 'node:fs'
import { sep } from 'node:path'
import type { PathAuthority } from '@dsh/sandbox'
import { expandRule } from '@dsh/sandbox-rules'
import { fencePoint } from './fences.ts'
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
  /**
   * Secret paths to hide and protected paths to bind read-only, the most paths one glob expands to, and the
   * mount points earlier commands of this process left behind (absent: no path rules).
   */
  pathRules?: { paths: PathAuthority; matchLimit: number; ours?: ReadonlySet<string> }
}

const within = (path: string, root: string) => path === root || path.startsWith(root.endsWith(sep) ? root : root + sep)

/**
 * bwrap arguments for one command. The whole host is bound read-only, /dev and /proc are fresh, /tmp is a
 * private tmpfs, then each writable root is bound read-write over it. The cwd is re-exposed read-only when
 * it lives under /tmp (the private /tmp would hide it) and no writable root covers it. Order matters:
 * later mounts cover earlier ones.
 */
export function bubblewrapArgs(plan: BubblewrapPlan): string[] {
  return bubblewrapMounts(plan).args
}

/** bwrap arguments for one command, and the mount points for missing paths bwrap will make on the disk. */
export function bubblewrapMounts(plan: BubblewrapPlan): { args: string[]; mountPoints: string[] } {
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp']
  const hiddenByTmp = plan.cwd !== '/tmp' && within(plan.cwd, '/tmp')
  if (hiddenByTmp && !plan.writableRoots.some((root) => within(plan.cwd, root)))
    args.push('--ro-bind', plan.cwd, plan.cwd)
  for (const root of plan.readableRoots ?? []) args.push('--ro-bind', root, root)
  for (const root of plan.writableRoots) args.push('--bind', root, root)
  const rules =
    plan.pathRules &&
    pathRuleMounts(
      plan.pathRules.paths,
      plan.writableRoots,
      plan.pathRules.matchLimit,
      plan.pathRules.ours ?? new Set(),
    )
  if (rules) args.push(...rules.args)
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
  return { args, mountPoints: rules?.mountPoints ?? [] }
}

const isDirectory = (path: string) => {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

/**
 * Mounts for the path rules, after the writable binds so they cover them (docs/security.md):
 * - a protected path inside a writable root is bound read-only over itself; a missing one (a protected or a
 *   secret path not there yet, `.husky`, `.mcp.json`, `~/.bash_login`) gets an empty read-only tmpfs at its
 *   first missing folder below the root, so nothing can be created there; bwrap makes that mount point on the
 *   disk, and it is returned so it can be removed after the command (`fences.ts`);
 * - a secret directory becomes an empty read-only tmpfs and a secret file `/dev/null` (bound without device
 *   access, so reading it fails), last, so nothing re-exposes them; a secret path that holds a writable root
 *   is left visible (it is the workspace);
 * - then each read exception (the session's spill folder) is bound read-only again inside its hidden parent.
 */
export function pathRuleArgs(paths: PathAuthority, writableRoots: string[], limit: number): string[] {
  return pathRuleMounts(paths, writableRoots, limit, new Set()).args
}

function pathRuleMounts(
  paths: PathAuthority,
  writableRoots: string[],
  limit: number,
  ours: ReadonlySet<string>,
): { args: string[]; mountPoints: string[] } {
  const protect = paths.protect.map((rule) => expandRule(rule.pattern, limit))
  const secret = paths.denyRead.map((rule) => expandRule(rule.pattern, limit))
  // Mount points an earlier command left (it was killed before removing them) are fenced again, not bound.
  const leftOver = (path: string) => ours.has(path) && fencePoint(path, writableRoots, ours) === path
  const readOnly = protect.flatMap(({ found }) =>
    found.filter((path) => !leftOver(path) && writableRoots.some((root) => within(path, root))),
  )
  const args = readOnly.flatMap((path) => ['--ro-bind', path, path])
  const mountPoints: string[] = []
  for (const missing of [...protect, ...secret].flatMap(({ found, missing }) => [
    ...found.filter(leftOver),
    ...(missing ? [missing] : []),
  ])) {
    const point = fencePoint(missing, writableRoots, ours)
    // Nothing can be made inside a read-only bind or a fence already planned (bwrap would fail to mount), and
    // inside a hidden secret folder nothing shows anyway.
    if (
      !point ||
      [...readOnly, ...mountPoints, ...secret.flatMap(({ found }) => found)].some((made) => within(point, made))
    )
      continue
    mountPoints.push(point)
    args.push('--tmpfs', point, '--remount-ro', point)
  }
  const hidden: string[] = []
  const remounts: string[] = []
  for (const path of secret.flatMap(({ found }) => found)) {
    if (hidden.includes(path) || mountPoints.includes(path) || writableRoots.some((root) => within(root, path)))
      continue
    hidden.push(path)
    if (isDirectory(path)) {
      args.push('--tmpfs', path)
      remounts.push('--remount-ro', path)
    } else args.push('--ro-bind', '/dev/null', path)
  }
  // Exceptions are bound while the tmpfs above them is still writable (bwrap makes their mount points there).
  for (const exception of paths.readExceptions) {
    if (
      existsSync(exception) &&
      isDirectory(exception) &&
      hidden.some((path) => within(exception, path) && exception !== path)
    )
      args.push('--ro-bind', exception, exception)
  }
  return { args: [...args, ...remounts], mountPoints }
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
