import { tmpdir } from 'node:os'
import { actorProblem, assertActor, type AuthorityActor } from '@dsh/authority-rules'
import { type Context, Service } from '@dsh/cordis'
import type {} from '@dsh/network'
import { SANDBOX_MODES, type SandboxAuthority, type SandboxMode, type SandboxNetwork, type SandboxProbe } from '@dsh/sandbox'
import Schema from '@dsh/schemastery'
import type { Session } from '@dsh/session'
import './events.ts'
import { resolveWritableRoots } from './roots.ts'

declare module '@dsh/cordis' {
  interface Context {
    sandboxPolicy: SandboxPolicy
  }
}

export interface Config {
  mode: SandboxMode
  writableRoots: string[]
  tempDir: boolean
}

const isMode = (value: unknown): value is SandboxMode => SANDBOX_MODES.includes(value as SandboxMode)

/**
 * The authority an agent acts under (DESIGN §8), derived from its session log every time it is asked, so a
 * switch takes effect at the next call and a resumed session keeps what it chose. Owns: the `sandbox/mode`
 * and `sandbox/probe` kinds, the mode in force, the writable roots, the record of the backend probe. Must not
 * own: enforcing the authority (ctx.fs, ctx.shell and ctx.sandbox do), approval policy (ctx.approval), or
 * presets (ctx.permissionPresets, which sets modes through `setMode` and may supply the default).
 */
export class SandboxPolicy extends Service {
  static inject = ['sessions']
  static Config: Schema<Partial<Config>, Config> = Schema.object({
    mode: Schema.union(SANDBOX_MODES).default('workspace-write').description('Mode of sessions whose log chose none (a mounted permission-presets row supplies its default preset\'s mode first).'),
    writableRoots: Schema.array(Schema.string()).default([]).description('Absolute directories writable besides the session\'s working directory (missing ones are left out).'),
    tempDir: Schema.boolean().default(false).description('Also make the OS temp directory writable. Off: it is shared with every other program; commands under bubblewrap get a private /tmp anyway.'),
  })

  private readonly defaults: (() => SandboxMode | undefined)[] = []
  private readonly probes = new WeakMap<Session, Promise<SandboxProbe | undefined>>()

  constructor(ctx: Context, public config: Config) {
    super(ctx, 'sandboxPolicy')
    ctx.sessions.defineKind(ctx, 'sandbox/mode', {
      validate: (data) => (isMode(data?.mode) ? actorProblem(data.actor) : `mode must be one of ${SANDBOX_MODES.join(', ')}`),
      // Logs written before actors were recorded hold none; the mode is checked as on append.
      validateStored: (data) => (isMode(data?.mode) ? (data.actor === undefined ? undefined : actorProblem(data.actor)) : `mode must be one of ${SANDBOX_MODES.join(', ')}`),
    })
    ctx.sessions.defineKind(ctx, 'sandbox/probe', {
      ignorable: true,
      validate: (data) => (typeof data?.backend === 'string' && typeof data.available === 'boolean' && typeof data.reason === 'string' ? undefined : 'a probe has backend (string), available (boolean) and reason (string)'),
    })
  }

  /**
   * Supplies the mode of sessions whose log chose none, for as long as `ctx` lives (the most recent supplier
   * that answers wins over this row's `mode`). Permission presets use it for their default preset.
   */
  useDefault(ctx: Context, supply: () => SandboxMode | undefined): void {
    ctx.effect(() => {
      this.defaults.push(supply)
      return () => void this.defaults.splice(this.defaults.indexOf(supply), 1)
    }, 'default sandbox mode')
  }

  /** The mode in force: the log's last `sandbox/mode`, else the supplied default, else this row's config. */
  mode(session: Session): SandboxMode {
    const logged = session.last('sandbox/mode')?.data.mode
    if (logged) return logged
    for (let i = this.defaults.length - 1; i >= 0; i--) {
      const supplied = this.defaults[i]!()
      if (supplied) return supplied
    }
    return this.config.mode
  }

  /**
   * Switches the mode from the next call on (a logged fact naming `actor`, who asked for it: there is no
   * default, so no caller can forget to say). Returns whether an event was appended.
   */
  setMode(session: Session, mode: SandboxMode, actor: AuthorityActor): boolean {
    if (!isMode(mode)) throw new TypeError(`unknown sandbox mode "${mode}" (known: ${SANDBOX_MODES.join(', ')})`)
    assertActor(actor, 'sandboxPolicy.setMode')
    if (session.last('sandbox/mode') && this.mode(session) === mode) return false
    session.append('sandbox/mode', { mode, actor })
    return true
  }

  /** The real paths writable in a writing mode: the session's working directory, then the configured roots. */
  async writableRoots(session: Session): Promise<string[]> {
    const candidates = [session.cwd, ...this.config.writableRoots, ...(this.config.tempDir ? [tmpdir()] : [])]
    const { roots, skipped } = await resolveWritableRoots(candidates)
    for (const { path, why } of skipped) this.ctx.logger('sandbox-policy').warn('writable root %s left out: %s', path, why)
    return roots
  }

  /**
   * The authority for the session's next effect. Records the sandbox backend's probe in the log the first
   * time a session needs an authority (and again if a later process finds the backend changed).
   */
  async authority(session: Session): Promise<SandboxAuthority> {
    await this.probe(session)
    const mode = this.mode(session)
    return { mode, writableRoots: mode === 'read-only' ? [] : await this.writableRoots(session), network: await this.network(session, mode) }
  }

  /**
   * The network of a mode: the host's when unconfined; in a confined mode the session's allow-list proxy
   * when a network row is mounted, else none at all (DESIGN §8: confined modes have no network).
   */
  async network(session: Session, mode: SandboxMode = this.mode(session)): Promise<SandboxNetwork> {
    if (mode === 'danger-full-access') return { kind: 'host' }
    const network = this.ctx.get('network')
    return network ? { kind: 'proxy', socket: await network.endpoint(session) } : { kind: 'none' }
  }

  /** The backend probe as the session records it; undefined when no sandbox row is mounted. */
  probe(session: Session): Promise<SandboxProbe | undefined> {
    let pending = this.probes.get(session)
    if (!pending) {
      pending = this.recordProbe(session)
      this.probes.set(session, pending)
    }
    return pending
  }

  private async recordProbe(session: Session): Promise<SandboxProbe | undefined> {
    const sandbox = this.ctx.get('sandbox')
    if (!sandbox) return undefined
    const found = await sandbox.probe()
    // Plain JSON only: an absent executable is left out rather than stored as undefined.
    const probe: SandboxProbe = { backend: found.backend, available: found.available, reason: found.reason, ...(found.executable ? { executable: found.executable } : {}) }
    const last = session.last('sandbox/probe')?.data
    if (!session.closed && (!last || JSON.stringify(last) !== JSON.stringify(probe))) session.append('sandbox/probe', probe)
    return probe
  }
}
