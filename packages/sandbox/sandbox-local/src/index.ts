import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, realpathSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { isAbsolute, join } from 'node:path'
import type { Context } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import { within } from '@dsh/sandbox-rules'
import type { SettingsService } from '@dsh/settings'
import {
  SANDBOX_MODES,
  Sandbox,
  SandboxError,
  type ConfineOptions,
  type Confinement,
  type SandboxAuthority,
  type SandboxProbe,
} from '@dsh/sandbox'
import { bubblewrapArgs, bubblewrapMounts, type BubblewrapNetwork } from './bubblewrap.ts'
import { tidiedArgv } from './fences.ts'
import { PRLIMIT64, launchedArgv } from './launcher.ts'
import { findExecutable } from './find-executable.ts'
import { closedArgv } from './descriptors.ts'
import { bridgedArgv, checkedNetwork } from './network.ts'
import {
  CommandCgroups,
  LIMIT_DESCRIPTIONS,
  LIMIT_SETTINGS,
  LimitsConfig,
  launchedLimits,
  limitedArgv,
  type ResourceLimits,
} from './limits.ts'
import { runProbe } from './run-probe.ts'
import { seatbeltArgs } from './seatbelt.ts'

export interface Config {
  probeTimeoutMs: number
  ruleMatchLimit: number
  proxyPort: number
  bash: string
  perl: string
  fenceLockDir: string
  fenceLockWaitMs: number
  limits: ResourceLimits
}

interface Backend {
  name: 'bubblewrap' | 'seatbelt'
  executable: string
  /** How it is named in messages. */
  label: string
  /** perl, which removes the mount points of missing paths under a lock (fences.ts); absent: they stay. */
  perl?: string
}

const BACKENDS: Partial<Record<NodeJS.Platform, Omit<Backend, 'executable'> & { file: string }>> = {
  linux: { name: 'bubblewrap', file: 'bwrap', label: 'bubblewrap (bwrap)' },
  darwin: { name: 'seatbelt', file: 'sandbox-exec', label: 'Seatbelt (sandbox-exec)' },
}

/** Absolute, existing, symlinks resolved: a root that is none of these cannot be fenced, so it is refused. */
function resolveRoots(authority: SandboxAuthority): string[] {
  if (authority.mode === 'read-only') return []
  return authority.writableRoots.map((root) => {
    if (!isAbsolute(root))
      throw new SandboxError('SANDBOX_INVALID_AUTHORITY', `writable root "${root}" is not an absolute path`)
    if (!existsSync(root) || !statSync(root).isDirectory())
      throw new SandboxError('SANDBOX_INVALID_AUTHORITY', `writable root ${root} does not exist or is not a directory`)
    return realpathSync(root)
  })
}

/**
 * ctx.sandbox on this machine: bubblewrap on Linux, Seatbelt on macOS. The backend is looked up on the
 * PATH of the moment of the first probe and proved by running a confined no-op; the result is kept.
 */
export default class SandboxLocal extends Sandbox {
  static Config: Schema<Partial<Config>, Config> = Schema.object({
    probeTimeoutMs: Schema.natural()
      .min(1)
      .default(5_000)
      .description('How long the backend probe (a confined no-op) may take (ms).'),
    ruleMatchLimit: Schema.natural()
      .min(1)
      .default(1000)
      .description(
        'Most existing paths one secret or protected path rule with a glob is expanded to for bubblewrap mounts.',
      ),
    proxyPort: Schema.natural()
      .min(1)
      .max(65_535)
      .default(3_128)
      .description(
        "Port of the bridge to the network proxy on a confined command's private loopback (bubblewrap; the proxy variables point there).",
      ),
    bash: Schema.string()
      .default('bash')
      .description(
        'The bash that closes inherited descriptors before a command without the proxy, and starts the node bridge when no perl is found (looked up on PATH).',
      ),
    fenceLockDir: Schema.string()
      .default('')
      .description(
        'Folder of the lock files (one per writable root) confined commands share, so an empty mount point made for a missing protected path is removed only once none runs in that root (empty: $XDG_RUNTIME_DIR/dsh-sandbox-fences, else dsh-sandbox-fences-<uid> in the OS temp folder).',
      ),
    fenceLockWaitMs: Schema.natural()
      .min(1)
      .default(10_000)
      .description(
        'How long a confined command waits for that lock before it is refused (ms): it may not run unlocked, or another command could remove its fences.',
      ),
    perl: Schema.string()
      .default('perl')
      .description(
        'The perl that starts a proxied command with its network bridge (one process, in milliseconds; when there is none, bash and this node do) and removes the mount points of missing protected paths after a command.',
      ),
    limits: LimitsConfig.description(
      'Resource limits of each confined command (bubblewrap), the defaults of the sandbox.limits.* settings.',
    ),
  })

  private probing?: Promise<{ probe: SandboxProbe; backend?: Backend }>
  /** Mount points for missing paths that commands of this process had bwrap make (see fences.ts). */
  private readonly mountPoints = new Set<string>()
  private warnedNoPerl = false
  /** The fence lock folder once made ('' when it could not be). */
  private fenceLockDir?: string
  private readonly cgroups = new CommandCgroups()
  private settings?: SettingsService

  constructor(
    ctx: Context,
    public config: Config,
  ) {
    super(ctx)
    // Optional: a sandbox mounted alone (tests, an SDK composition) has no settings and uses the row's limits.
    ctx.inject(['settings'], (ctx) => {
      for (const [field, key] of Object.entries(LIMIT_SETTINGS) as [keyof ResourceLimits, string][]) {
        ctx.settings.define(key, Schema.natural().default(config.limits[field]), {
          description: LIMIT_DESCRIPTIONS[field],
        })
      }
      this.settings = ctx.settings
      ctx.effect(() => () => (this.settings = undefined), 'forget the settings')
    })
    ctx.effect(() => () => this.cgroups.dispose(), 'remove command cgroups')
  }

  async probe(): Promise<SandboxProbe> {
    return (await this.detect()).probe
  }

  async confine(argv: string[], options: ConfineOptions): Promise<Confinement> {
    const { mode } = options.authority
    if (!SANDBOX_MODES.includes(mode))
      throw new SandboxError(
        'SANDBOX_INVALID_AUTHORITY',
        `unknown sandbox mode "${mode}" (known: ${SANDBOX_MODES.join(', ')})`,
      )
    if (mode === 'danger-full-access') return { argv, enforcement: 'none', backend: 'none' }
    if (!isAbsolute(options.cwd) || !existsSync(options.cwd))
      throw new SandboxError(
        'SANDBOX_INVALID_AUTHORITY',
        `working directory "${options.cwd}" is not an existing absolute path`,
      )
    const writableRoots = resolveRoots(options.authority)
    const { probe, backend } = await this.detect()
    if (!backend)
      throw new SandboxError('SANDBOX_UNAVAILABLE', `cannot confine a command in ${mode} mode: ${probe.reason}`)
    const network = checkedNetwork(options.authority.network)
    if (backend.name === 'seatbelt') {
      // No bridge under Seatbelt: a proxy network is no network there (fail closed).
      return {
        argv: [backend.executable, ...seatbeltArgs(writableRoots, network.kind !== 'host'), ...argv],
        enforcement: 'partial',
        backend: backend.name,
      }
    }
    const cwd = realpathSync(options.cwd)
    const planned: BubblewrapNetwork = network.kind === 'proxy' ? { ...network, port: this.config.proxyPort } : network
    const pathRules = options.authority.paths
      ? {
          pathRules: { paths: options.authority.paths, matchLimit: this.config.ruleMatchLimit, ours: this.mountPoints },
        }
      : {}
    // Only existing folders, by their real path: bwrap fails on a missing source.
    const readableRoots = (options.authority.readableRoots ?? [])
      .filter((root) => isAbsolute(root) && existsSync(root))
      .map((root) => realpathSync(root))
    const { args, mountPoints } = bubblewrapMounts({
      writableRoots,
      readableRoots,
      cwd,
      terminal: options.terminal ?? false,
      network: planned,
      ...pathRules,
    })
    for (const point of mountPoints) this.mountPoints.add(point)
    const runtimes = { bash: this.config.bash, node: process.execPath, ...(backend.perl ? { perl: backend.perl } : {}) }
    const limits = this.limits()
    const cgroups = this.cgroups.create({
      ...(limits.processes ? { pids: limits.processes } : {}),
      ...(limits.memory ? { memory: limits.memory } : {}),
    })
    const launched = backend.perl ? launchedLimits(limits, cgroups, PRLIMIT64[process.arch]) : undefined
    if (backend.perl && launched) {
      // One launcher outside (launcher.ts: descriptors, fences, cgroups, rlimits, the limit named after); inside,
      // the proxied command starts under the bridge, any other is bwrap's child itself.
      const command = network.kind === 'proxy' ? bridgedArgv(runtimes, this.config.proxyPort, argv) : argv
      const groups = mountPoints.length ? this.fenceGroups(mountPoints, writableRoots, backend) : []
      return {
        argv: launchedArgv(
          { perl: backend.perl, waitSeconds: this.config.fenceLockWaitMs / 1000, groups, ...launched },
          [backend.executable, ...args, '--', ...command],
        ),
        enforcement: 'full',
        backend: backend.name,
      }
    }
    // Without perl, or with a process limit no cgroup can hold (RLIMIT_NPROC must be set inside the user
    // namespace), or on an architecture without a known prlimit64: the chain of shells (limits.ts, fences.ts).
    const { inner, outer, closes } = limitedArgv(this.config.bash, limits, cgroups, argv)
    const command =
      network.kind === 'proxy'
        ? bridgedArgv(runtimes, this.config.proxyPort, inner)
        : closes
          ? inner
          : closedArgv(this.config.bash, inner)
    // The cgroup prefix joins bwrap to the command's cgroups; the tidier stays outside them, so a command its
    // memory limit kills cannot take the removal of its mount points with it (fences.ts, limits.ts).
    const confined = [...outer, backend.executable, ...args, '--', ...command]
    const groups = mountPoints.length ? this.fenceGroups(mountPoints, writableRoots, backend) : []
    return {
      argv: groups.length
        ? tidiedArgv({ perl: backend.perl!, waitSeconds: this.config.fenceLockWaitMs / 1000, groups }, confined)
        : confined,
      enforcement: 'full',
      backend: backend.name,
    }
  }

  /**
   * The fence lock of each writable root with mount points for missing paths (fences.ts), or none (the
   * folders then stay): without perl, or without a lock folder out of every writable root.
   */
  private fenceGroups(
    mountPoints: string[],
    writableRoots: string[],
    backend: Backend,
  ): { lock: string; points: string[] }[] {
    if (!backend.perl) {
      if (!this.warnedNoPerl)
        this.ctx
          .logger('sandbox')
          .warn(
            '%s not found on PATH: the empty folders bubblewrap makes for missing protected paths stay in the workspace',
            this.config.perl,
          )
      this.warnedNoPerl = true
      return []
    }
    const dir = this.lockDir()
    // A lock the command could replace would let another command's tidying open its fences: then leave them.
    if (!dir || writableRoots.some((root) => within(dir, root))) return []
    const byRoot = new Map<string, string[]>()
    for (const point of mountPoints) {
      const root = writableRoots.find((candidate) => within(point, candidate) && point !== candidate)!
      byRoot.set(root, [...(byRoot.get(root) ?? []), point])
    }
    return [...byRoot].map(([root, points]) => ({
      lock: join(dir, `${createHash('sha256').update(root).digest('hex').slice(0, 32)}.lock`),
      points,
    }))
  }

  /** The folder of the per-root fence locks (0700, made once), or undefined when it cannot be made. */
  private lockDir(): string | undefined {
    if (this.fenceLockDir !== undefined) return this.fenceLockDir || undefined
    const runtime = process.env.XDG_RUNTIME_DIR
    const dir =
      this.config.fenceLockDir ||
      (runtime && isAbsolute(runtime)
        ? join(runtime, 'dsh-sandbox-fences')
        : join(tmpdir(), `dsh-sandbox-fences-${process.getuid?.() ?? 'user'}`))
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 })
      // Another user's folder (made first in a shared temp folder) would let that user tidy under our commands.
      if (process.getuid && statSync(dir).uid !== process.getuid()) throw new Error(`${dir} belongs to another user`)
      this.fenceLockDir = dir
    } catch (error) {
      this.ctx
        .logger('sandbox')
        .warn(
          'no fence lock folder (%s): the empty folders bubblewrap makes for missing protected paths stay in the workspace',
          error instanceof Error ? error.message : error,
        )
      this.fenceLockDir = ''
    }
    return this.fenceLockDir || undefined
  }

  /** The limits of the next command: the settings win over the row's. */
  private limits(): ResourceLimits {
    return Object.fromEntries(
      Object.entries(LIMIT_SETTINGS).map(([field, key]) => [
        field,
        this.settings ? this.settings.get(key) : this.config.limits[field as keyof ResourceLimits],
      ]),
    ) as unknown as ResourceLimits
  }

  private detect() {
    return (this.probing ??= this.runDetection())
  }

  private async runDetection(): Promise<{ probe: SandboxProbe; backend?: Backend }> {
    const known = BACKENDS[process.platform]
    if (!known)
      return {
        probe: {
          backend: 'none',
          available: false,
          reason: `no sandbox backend for platform ${process.platform} (bubblewrap on Linux, Seatbelt on macOS)`,
        },
      }
    const executable = findExecutable(known.file, process.env.PATH)
    if (!executable)
      return { probe: { backend: known.name, available: false, reason: `${known.label} not found on PATH` } }
    const probeArgv =
      known.name === 'bubblewrap'
        ? [
            executable,
            ...bubblewrapArgs({ writableRoots: [], cwd: '/', terminal: false, network: { kind: 'none' } }),
            '--',
            'true',
          ]
        : [executable, ...seatbeltArgs([], true), '/usr/bin/true']
    const run = await runProbe(probeArgv, this.config.probeTimeoutMs)
    const probe: SandboxProbe = run.ok
      ? {
          backend: known.name,
          available: true,
          reason: `${known.label} at ${executable} ran a confined no-op`,
          executable,
        }
      : {
          backend: known.name,
          available: false,
          reason: `${known.label} at ${executable} cannot confine: ${run.detail}`,
          executable,
        }
    const perl = isAbsolute(this.config.perl)
      ? existsSync(this.config.perl)
        ? this.config.perl
        : undefined
      : findExecutable(this.config.perl, process.env.PATH)
    return {
      probe,
      backend: run.ok ? { name: known.name, executable, label: known.label, ...(perl ? { perl } : {}) } : undefined,
    }
  }
}
