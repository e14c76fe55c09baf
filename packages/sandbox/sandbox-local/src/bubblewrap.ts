import { sep } from 'node:path'

export interface BubblewrapPlan {
  /** Writable roots, absolute and resolved; empty in read-only. */
  writableRoots: string[]
  cwd: string
  terminal: boolean
  denyNetwork: boolean
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
  for (const root of plan.writableRoots) args.push('--bind', root, root)
  // Own pid namespace: when bwrap dies (--die-with-parent follows ours), everything inside dies with it.
  args.push('--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try')
  if (plan.denyNetwork) args.push('--unshare-net')
  args.push('--die-with-parent')
  // Without a terminal of its own, a new session leaves the command no controlling terminal to inject
  // keystrokes into (TIOCSTI). A private PTY stays the controlling terminal: its input is ours alone.
  if (!plan.terminal) args.push('--new-session')
  args.push('--chdir', plan.cwd)
  return args
}
