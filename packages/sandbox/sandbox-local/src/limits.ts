import { mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import Schema from '@dsh/schemastery'
import { CLOSE_INHERITED } from './descriptors.ts'
import { RLIMIT, type LaunchPlan } from './launcher.ts'

/**
 * Resource limits of one confined command (docs/security.md, "Resource limits"); 0 means no limit.
 * `processes` and `memory` are a cgroup's (pids.max, the memory limit) where dsh can create one, else
 * `processes` falls back to RLIMIT_NPROC and `memory` to nothing; the others are rlimits.
 */
export interface ResourceLimits {
  processes: number
  fileSize: number
  memory: number
  addressSpace: number
  cpuSeconds: number
}

const GIB = 1024 ** 3

/**
 * The defaults, chosen so that normal builds never meet them (see
 * .agents/notes/implemented/decision/2026-12-02-resource-limits.md): thousands of tasks (pids counts
 * threads: a parallel build of node processes uses hundreds), files of gigabytes, a third of this 24 GiB
 * machine, no address-space cap (node reserves over 10 GiB for WebAssembly), two hours of CPU per process.
 */
export const LIMIT_DESCRIPTIONS: Record<keyof ResourceLimits, string> = {
  processes:
    "Most processes and threads one confined command may have at once, the sandbox's own 2–3 included (a pids cgroup; else RLIMIT_NPROC, which does not bind root). 0: no limit.",
  fileSize: 'Largest file one confined command may write, in bytes (RLIMIT_FSIZE, whole KiB). 0: no limit.',
  memory:
    'Most memory one confined command may use, in bytes (a memory cgroup where dsh can create one, else not applied). 0: no limit.',
  addressSpace:
    'Largest address space of each confined process, in bytes (RLIMIT_AS, whole KiB). Node needs more than 10 GiB for WebAssembly. 0: no limit.',
  cpuSeconds:
    'Most CPU seconds each confined process may use (RLIMIT_CPU: SIGXCPU at the limit, SIGKILL 5 s later). 0: no limit.',
}

export const LimitsConfig: Schema<Partial<ResourceLimits>, ResourceLimits> = Schema.object({
  processes: Schema.natural().default(4096).description(LIMIT_DESCRIPTIONS.processes),
  fileSize: Schema.natural()
    .default(8 * GIB)
    .description(LIMIT_DESCRIPTIONS.fileSize),
  memory: Schema.natural()
    .default(8 * GIB)
    .description(LIMIT_DESCRIPTIONS.memory),
  addressSpace: Schema.natural().default(0).description(LIMIT_DESCRIPTIONS.addressSpace),
  cpuSeconds: Schema.natural().default(7200).description(LIMIT_DESCRIPTIONS.cpuSeconds),
})

/** The settings that override the row's limits, one per field. */
export const LIMIT_SETTINGS = {
  processes: 'sandbox.limits.processes',
  fileSize: 'sandbox.limits.fileSize',
  memory: 'sandbox.limits.memory',
  addressSpace: 'sandbox.limits.addressSpace',
  cpuSeconds: 'sandbox.limits.cpuSeconds',
} as const satisfies Record<keyof ResourceLimits, string>

type Controller = 'pids' | 'memory'

/** Where this process's cgroup of one controller is, and how its files are named. */
interface Hierarchy {
  controller: Controller
  dir: string
  version: 1 | 2
}

const LIMIT_FILE: Record<Controller, Record<1 | 2, string>> = {
  pids: { 1: 'pids.max', 2: 'pids.max' },
  memory: { 1: 'memory.limit_in_bytes', 2: 'memory.max' },
}
// The counters the launcher reads after the command: `max N` (forks refused) and `oom_kill N`.
const EVENTS_FILE: Record<Controller, Record<1 | 2, string>> = {
  pids: { 1: 'pids.events', 2: 'pids.events' },
  memory: { 1: 'memory.oom_control', 2: 'memory.events' },
}

/** This process's cgroup of `controller` (v1 hierarchy first: a controller bound there is absent from v2). */
export function findHierarchy(
  controller: Controller,
  cgroupText: string,
  mountinfoText: string,
): Hierarchy | undefined {
  const memberships = cgroupText
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [, controllers = '', path = ''] = line.split(/:(.*?):/)
      return { controllers: controllers.split(','), path }
    })
  const mounts = mountinfoText
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [left = '', right = ''] = line.split(' - ')
      const fields = left.split(' ')
      const [fstype = '', , superOptions = ''] = right.split(' ')
      return { root: fields[3] ?? '', point: fields[4] ?? '', fstype, options: superOptions.split(',') }
    })
  const v1 = memberships.find((entry) => entry.controllers.includes(controller))
  const v1Mount = mounts.find((mount) => mount.fstype === 'cgroup' && mount.options.includes(controller))
  const dir = (point: string, path: string, root: string) => join(point, relativeTo(path, root)).replace(/(.)\/$/, '$1')
  if (v1 && v1Mount) return { controller, version: 1, dir: dir(v1Mount.point, v1.path, v1Mount.root) }
  const v2 = memberships.find((entry) => entry.controllers.length === 1 && entry.controllers[0] === '')
  const v2Mount = mounts.find((mount) => mount.fstype === 'cgroup2')
  if (v2 && v2Mount) return { controller, version: 2, dir: dir(v2Mount.point, v2.path, v2Mount.root) }
  return undefined
}

const relativeTo = (path: string, root: string) =>
  root === '/' ? path : path.startsWith(root) ? path.slice(root.length) : path

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

const isEmpty = (file: string) => {
  try {
    return readFileSync(file, 'utf8') === ''
  } catch {
    return false
  }
}

// A cgroup whose last process exited a moment ago can still be busy; after this the next dsh removes it.
const DISPOSE_ATTEMPTS = 20
const DISPOSE_RETRY_MS = 50

/** Removes a cgroup folder and those below it: true when it is gone. */
const removeTree = (dir: string): boolean => {
  try {
    for (const entry of readdirSync(dir, { withFileTypes: true }))
      if (entry.isDirectory()) removeTree(join(dir, entry.name))
    rmdirSync(dir)
    return true
  } catch (error) {
    // Still populated (a command lives on): the next dsh to start removes what is left.
    return (error as NodeJS.ErrnoException).code === 'ENOENT'
  }
}

/**
 * One cgroup per confined command, under `dsh-<pid>` in this process's own cgroup of each controller.
 * Made at confine time and reused once idle, removed on dispose; the folders of a dsh that died are
 * removed by the next dsh. A controller whose cgroup cannot be created or limited (no
 * writable cgroup file system, cgroup v2 without delegation) is not available; `reason` says why.
 */
let instances = 0

export class CommandCgroups {
  private readonly parents = new Map<Controller, { hierarchy: Hierarchy; parent: string } | { reason: string }>()
  /** Every command cgroup made, by name; an idle one (no process in any controller) is reused. */
  private readonly made: { name: string; procs: string[] }[] = []
  private readonly instance = `${process.pid}-${instances++}`

  /** Which controllers work here, and why not (detected once, on first use). */
  availability(controller: Controller): { ok: true } | { ok: false; reason: string } {
    const found = this.parent(controller)
    return 'reason' in found ? { ok: false, reason: found.reason } : { ok: true }
  }

  /**
   * A cgroup of each controller with its limit set, for one command: an idle one made earlier (its
   * `cgroup.procs` empty: a cgroup's mkdir and rmdir cost milliseconds), else a new one. Returns the files
   * to join it by and to read its event counters from (the launcher compares them before and after).
   */
  create(limits: Partial<Record<Controller, number>>): {
    procs: string[]
    events: Partial<Record<Controller, string>>
  } {
    const controllers = (Object.keys(limits) as Controller[]).filter(
      (controller) => !('reason' in this.parent(controller)),
    )
    const idle = this.made.find(
      (entry) => entry.procs.length === controllers.length && entry.procs.every((file) => isEmpty(file)),
    )
    const name = idle?.name ?? `${this.made.length}`
    const procs: string[] = []
    const events: Partial<Record<Controller, string>> = {}
    for (const controller of controllers) {
      const { hierarchy, parent } = this.parent(controller) as { hierarchy: Hierarchy; parent: string }
      const dir = join(parent, name)
      if (!idle) mkdirSync(dir)
      writeFileSync(join(dir, LIMIT_FILE[controller][hierarchy.version]), String(limits[controller]))
      procs.push(join(dir, 'cgroup.procs'))
      events[controller] = join(dir, EVENTS_FILE[controller][hierarchy.version])
    }
    if (!idle && procs.length) this.made.push({ name, procs })
    return { procs, events }
  }

  /** Removes every cgroup made; one whose last process is still being torn down is tried again for a moment. */
  async dispose(): Promise<void> {
    const parents = [...this.parents.values()].flatMap((found) => ('parent' in found ? [found.parent] : []))
    for (let attempt = 0; attempt < DISPOSE_ATTEMPTS; attempt++) {
      if (parents.every((parent) => removeTree(parent))) return
      await new Promise((resolve) => setTimeout(resolve, DISPOSE_RETRY_MS))
    }
  }

  private parent(controller: Controller) {
    let found = this.parents.get(controller)
    if (!found) this.parents.set(controller, (found = this.prepare(controller)))
    return found
  }

  private prepare(controller: Controller): { hierarchy: Hierarchy; parent: string } | { reason: string } {
    let hierarchy: Hierarchy | undefined
    try {
      hierarchy = findHierarchy(
        controller,
        readFileSync('/proc/self/cgroup', 'utf8'),
        readFileSync('/proc/self/mountinfo', 'utf8'),
      )
    } catch (error) {
      return { reason: `cannot read this process's cgroups: ${(error as Error).message}` }
    }
    if (!hierarchy) return { reason: `no ${controller} cgroup is mounted` }
    const parent = join(hierarchy.dir, `dsh-${this.instance}`)
    try {
      for (const entry of readdirSync(hierarchy.dir)) {
        const pid = /^dsh-(\d+)-\d+$/.exec(entry)?.[1]
        if (pid && Number(pid) !== process.pid && !alive(Number(pid))) removeTree(join(hierarchy.dir, entry))
      }
      if (hierarchy.version === 2) {
        if (!readFileSync(join(hierarchy.dir, 'cgroup.controllers'), 'utf8').split(/\s+/).includes(controller))
          return { reason: `the ${controller} controller is not enabled for ${hierarchy.dir}` }
        writeFileSync(join(hierarchy.dir, 'cgroup.subtree_control'), `+${controller}`)
      }
      mkdirSync(parent, { recursive: true })
      if (hierarchy.version === 2) writeFileSync(join(parent, 'cgroup.subtree_control'), `+${controller}`)
      // Proves a limit can be written (a read-only or undelegated cgroup fails here, not per command).
      const trial = join(parent, 'trial')
      mkdirSync(trial)
      try {
        writeFileSync(join(trial, LIMIT_FILE[controller][hierarchy.version]), controller === 'pids' ? '1' : String(GIB))
      } finally {
        rmdirSync(trial)
      }
    } catch (error) {
      removeTree(parent)
      return { reason: `cannot create a ${controller} cgroup under ${hierarchy.dir}: ${(error as Error).message}` }
    }
    return { hierarchy, parent }
  }
}

// Runs inside the sandbox, first closing inherited descriptors (./descriptors.ts): sets the rlimits, runs the
// command as its child (not exec: it reads how the command ended), and names the limit that stopped it on
// stderr, so the model reads which one and its setting. Counters are read before and after (a reused cgroup
// keeps its counts) with builtins only: no process is started but the command.
const LAUNCHER = [
  CLOSE_INHERITED,
  'f=$1 t=$2 v=$3 u=$4 pids_events=$5 memory_events=$6 fsize=$7 cpu=$8 procs=$9 memory=${10}; shift 10',
  'count() { n=0; [ -n "$2" ] && while read -r key value; do [ "$key" = "$1" ] && n=$value; done < "$2"; }',
  'count max "$pids_events"; forks0=$n; count oom_kill "$memory_events"; kills0=$n',
  '[ "$f" = 0 ] || ulimit -f "$f" || exit 125',
  // SIGXCPU at the limit (a message can name it), SIGKILL a few seconds later if the process ignores it.
  '[ "$t" = 0 ] || { ulimit -t $((t + 5)) && ulimit -S -t "$t"; } || exit 125',
  '[ "$v" = 0 ] || ulimit -v "$v" || exit 125',
  '[ "$u" = 0 ] || ulimit -u "$u" || exit 125',
  '"$@"; status=$?',
  'if [ $status = 153 ]; then echo "dsh: exit 153 is SIGXFSZ: a write went past the sandbox\'s file-size limit (sandbox.limits.fileSize: $fsize)" >&2; fi',
  'if [ $status = 152 ]; then echo "dsh: exit 152 is SIGXCPU: a process used up the sandbox\'s CPU-time limit (sandbox.limits.cpuSeconds: $cpu)" >&2; fi',
  'count max "$pids_events"; if [ "$n" != "$forks0" ]; then echo "dsh: the command reached the sandbox\'s process limit (sandbox.limits.processes: $procs): new processes were refused" >&2; fi',
  'count oom_kill "$memory_events"; if [ "$n" != "$kills0" ]; then echo "dsh: a process was killed for using more than the sandbox\'s memory limit (sandbox.limits.memory: $memory)" >&2; fi',
  'exit $status',
].join('\n')

const human = (bytes: number) =>
  bytes % GIB === 0 ? `${bytes / GIB} GiB` : bytes % 1024 ** 2 === 0 ? `${bytes / 1024 ** 2} MiB` : `${bytes} bytes`
const kib = (bytes: number) => (bytes === 0 ? 0 : Math.max(1, Math.floor(bytes / 1024)))

/** The limits as the launcher outside the sandbox applies them (launcher.ts), or undefined when it cannot. */
export function launchedLimits(
  limits: ResourceLimits,
  cgroups: { procs: string[]; events: Partial<Record<Controller, string>> },
  prlimit: number | undefined,
): Pick<LaunchPlan, 'prlimit' | 'rlimits' | 'procs' | 'events' | 'labels'> | undefined {
  // RLIMIT_NPROC set before bwrap makes its user namespace would count every process of the user on the host
  // (the namespace keeps its creator's limit as the ceiling of its parent's count): it stays inside, in bash.
  if (limits.processes && !cgroups.events.pids) return undefined
  const rlimits = [
    ...(limits.fileSize
      ? [{ resource: RLIMIT.fileSize, soft: kib(limits.fileSize) * 1024, hard: kib(limits.fileSize) * 1024 }]
      : []),
    // SIGXCPU at the limit (a message can name it), SIGKILL a few seconds later if the process ignores it.
    ...(limits.cpuSeconds ? [{ resource: RLIMIT.cpu, soft: limits.cpuSeconds, hard: limits.cpuSeconds + 5 }] : []),
    ...(limits.addressSpace
      ? [
          {
            resource: RLIMIT.addressSpace,
            soft: kib(limits.addressSpace) * 1024,
            hard: kib(limits.addressSpace) * 1024,
          },
        ]
      : []),
  ]
  if (rlimits.length && prlimit === undefined) return undefined
  return {
    ...(prlimit === undefined ? {} : { prlimit }),
    rlimits,
    procs: cgroups.procs,
    events: cgroups.events,
    labels: {
      fileSize: limits.fileSize ? human(limits.fileSize) : '',
      cpuSeconds: limits.cpuSeconds ? `${limits.cpuSeconds} s` : '',
      processes: String(limits.processes),
      memory: human(limits.memory),
    },
  }
}

/**
 * The argv, inside the sandbox, that applies `limits` around `argv` (and closes inherited descriptors:
 * `closes`), and the argv prefix, outside it, that puts the sandbox into the command's cgroups (a shell
 * that joins them, then execs the sandbox). No limit at all: `argv` itself.
 */
export function limitedArgv(
  bash: string,
  limits: ResourceLimits,
  cgroups: { procs: string[]; events: Partial<Record<Controller, string>> },
  argv: string[],
) {
  if (Object.values(limits).every((value) => value === 0)) return { inner: argv, outer: [], closes: false }
  const nproc = cgroups.events.pids ? 0 : limits.processes
  const inner = [
    bash,
    '-c',
    LAUNCHER,
    'dsh-limits',
    String(kib(limits.fileSize)),
    String(limits.cpuSeconds),
    String(kib(limits.addressSpace)),
    String(nproc),
    cgroups.events.pids ?? '',
    cgroups.events.memory ?? '',
    human(limits.fileSize),
    `${limits.cpuSeconds} s`,
    String(limits.processes),
    human(limits.memory),
    ...argv,
  ]
  const outer = cgroups.procs.length
    ? [
        '/bin/sh',
        '-c',
        'while [ "$1" != -- ]; do echo $$ > "$1" || { echo "dsh: cannot join the command\'s cgroup $1" >&2; exit 125; }; shift; done; shift; exec "$@"',
        'dsh-cgroups',
        ...cgroups.procs,
        '--',
      ]
    : []
  return { inner, outer, closes: true }
}
