import { realpathSync } from 'node:fs'
import { tmpdir } from 'node:os'
import type {} from '@dsh/app'
import { assertActor, type AuthorityActor } from '@dsh/authority-rules'
import { type Context, Service } from '@dsh/cordis'
import type {} from '@dsh/network'
import { SANDBOX_MODES, type PathAuthority, type SandboxAuthority, type SandboxMode, type SandboxNetwork, type SandboxProbe } from '@dsh/sandbox'
import { coveringRule } from '@dsh/sandbox-rules'
import Schema from '@dsh/schemastery'
import type { Session } from '@dsh/session'
import type {} from '@dsh/settings'
import type {} from '@dsh/spill'
import { SandboxCeilingData, SandboxModeData, SandboxProbeData, storedModeProblem } from './events.ts'
import { currentHome, realPathOf, resolveRules, type RuleBases } from './paths.ts'
import { resolveWritableRoots } from './roots.ts'
import { contributeAuthoritySection } from './prompt.ts'

declare module '@dsh/settings' {
  interface Settings {
    'sandbox.denyRead': string[]
    'sandbox.protect': string[]
  }
}

declare module '@dsh/cordis' {
  interface Context {
    sandboxPolicy: SandboxPolicy
  }
}

export interface Config {
  mode: SandboxMode
  writableRoots: string[]
  tempDir: boolean
  denyRead: string[]
  protect: string[]
}

/** Secret paths of every session (DESIGN §8): credentials, keys, cloud and registry tokens, browser profiles. */
export const DEFAULT_DENY_READ = [
  '$DSH_HOME',
  '~/.ssh',
  '~/.gnupg',
  '~/.aws',
  '~/.azure',
  '~/.config/gcloud',
  '~/.kube',
  '~/.docker/config.json',
  '~/.netrc',
  '~/.npmrc',
  '~/.pypirc',
  '~/.git-credentials',
  '~/.config/gh',
  '~/.password-store',
  '~/.mozilla',
  '~/.config/chromium',
  '~/.config/google-chrome',
  '~/.config/BraveSoftware',
  '~/.config/microsoft-edge',
  '~/Library/Application Support/Google/Chrome',
  '~/Library/Application Support/Firefox',
]

/**
 * Protected paths of every writable root: what something unconfined later runs or obeys (git's hooks and
 * config, dsh's and other agents' and editors' workspace config, direnv's `.envrc`, husky's hooks).
 * `AGENTS.md` and `CLAUDE.md` are instructions, not configuration, and stay writable. A trailing `/` marks the
 * folders fenced in the sandbox even before they exist (an empty read-only folder is mounted there).
 */
export const DEFAULT_PROTECT = ['.git/', '.dsh/', '.claude/', '.vscode/', '.mcp.json', '.idea', '.cursor', '.zed', '.envrc', '.husky']

const isMode = (value: unknown): value is SandboxMode => SANDBOX_MODES.includes(value as SandboxMode)

/**
 * The authority an agent acts under (DESIGN §8), derived from its session log every time it is asked, so a
 * switch takes effect at the next call and a resumed session keeps what it chose. Owns: the `sandbox/mode`
 * and `sandbox/probe` kinds, the mode in force, the writable roots, the record of the backend probe. Must not
 * own: enforcing the authority (ctx.fs, ctx.shell and ctx.sandbox do), approval policy (ctx.approval), or
 * presets (ctx.permissionPresets, which sets modes through `setMode` and may supply the default).
 */
export class SandboxPolicy extends Service {
  static inject = ['sessions', 'settings', 'app']
  static Config: Schema<Partial<Config>, Config> = Schema.object({
    mode: Schema.union(SANDBOX_MODES).default('workspace-write').description("Mode of sessions whose log chose none (a mounted permission-presets row supplies its default preset's mode first)."),
    writableRoots: Schema.array(Schema.string()).default([]).description("Absolute directories writable besides the session's working directory (missing ones are left out)."),
    tempDir: Schema.boolean().default(false).description('Also make the OS temp directory writable. Off: it is shared with every other program; commands under bubblewrap get a private /tmp anyway.'),
    denyRead: Schema.array(Schema.string())
      .default(DEFAULT_DENY_READ)
      .description('Secret paths (with the `sandbox.denyRead` setting): ~/…, $DSH_HOME/…, absolute, or relative to each writable root; globs per segment, `**` only at the end.'),
    protect: Schema.array(Schema.string()).default(DEFAULT_PROTECT).description('Read-only paths inside the writable roots (with the `sandbox.protect` setting): relative to each root, or absolute.'),
  })

  private readonly defaults: (() => SandboxMode | undefined)[] = []
  private readonly probes = new WeakMap<Session, Promise<SandboxProbe | undefined>>()
  /** Rules left out for covering a writable root, warned about once each. */
  private readonly warned = new Set<string>()

  constructor(
    ctx: Context,
    public config: Config,
  ) {
    super(ctx, 'sandboxPolicy')
    contributeAuthoritySection(ctx)
    ctx.sessions.defineKind(ctx, 'sandbox/mode', { schema: SandboxModeData, validateStored: storedModeProblem })
    ctx.sessions.defineKind(ctx, 'sandbox/ceiling', { schema: SandboxCeilingData })
    ctx.sessions.defineKind(ctx, 'sandbox/probe', { ignorable: true, schema: SandboxProbeData })
    ctx.settings.define('sandbox.denyRead', Schema.array(Schema.string()).default([]), {
      description:
        'More secret paths, besides the built-in list: unreadable by the file tools, hidden from confined commands (~/…, $DSH_HOME/…, absolute, or relative to the workspace; globs per segment).',
    })
    ctx.settings.define('sandbox.protect', Schema.array(Schema.string()).default([]), {
      description: 'More read-only paths inside the writable roots, besides .git, .dsh and the agent and editor config folders (relative to each writable root, or absolute).',
    })
    // Fail loud at start: a rule that cannot be applied stops the boot, naming it, rather than every later call.
    this.pathRules(ctx.app.cwd ? [ctx.app.cwd] : [])
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

  /**
   * The mode in force: the log's last `sandbox/mode`, else its ceiling, else the supplied default, else this
   * row's config; never above the log's lowest `sandbox/ceiling`, whoever logged a mode after it.
   */
  mode(session: Session): SandboxMode {
    const ceiling = this.ceiling(session)
    const chosen = session.last('sandbox/mode')?.data.mode ?? ceiling ?? this.defaultMode()
    return ceiling && SANDBOX_MODES.indexOf(chosen) > SANDBOX_MODES.indexOf(ceiling) ? ceiling : chosen
  }

  /** The lowest `sandbox/ceiling` of the log, if it has one. */
  ceiling(session: Session): SandboxMode | undefined {
    let lowest: SandboxMode | undefined
    for (const event of session.all('sandbox/ceiling')) if (!lowest || SANDBOX_MODES.indexOf(event.data.mode) < SANDBOX_MODES.indexOf(lowest)) lowest = event.data.mode
    return lowest
  }

  /**
   * Caps the session at `mode` for good (a logged `sandbox/ceiling`; a later, higher one changes nothing).
   * Used for a subagent's session before its first turn, so nothing inside it can widen its authority.
   */
  setCeiling(session: Session, mode: SandboxMode, why: string): void {
    if (!isMode(mode)) throw new TypeError(`unknown sandbox mode "${mode}" (known: ${SANDBOX_MODES.join(', ')})`)
    session.append('sandbox/ceiling', { mode, why })
  }

  private defaultMode(): SandboxMode {
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
    const roots = await this.writableRoots(session)
    const paths = this.pathRules(roots)
    const spill = this.ctx.get('spillStore')?.readableDir(session.id)
    // As written and as its real path: the read fence compares real paths.
    if (spill) paths.readExceptions.push(...new Set([spill, realPathOf(spill)]))
    return { mode, writableRoots: mode === 'read-only' ? [] : roots, paths, network: await this.network(session, mode) }
  }

  /**
   * The secret and protected paths, resolved under `roots` (the real session cwd first, even in read-only:
   * a relative rule means the same place in every mode). Throws PathRuleError naming a bad rule and where.
   */
  pathRules(roots: string[]): PathAuthority {
    let dshHome = this.ctx.app.home
    try {
      dshHome = realpathSync(dshHome)
    } catch {
      // not created yet: the written path is the only one
    }
    const bases: RuleBases = { home: currentHome(), dshHome, roots }
    const denyRead = [
      ...resolveRules(this.config.denyRead, bases, "the sandbox-policy row's denyRead"),
      ...resolveRules(this.ctx.settings.get('sandbox.denyRead'), bases, 'the setting sandbox.denyRead'),
    ]
    return {
      // A secret rule covering a writable root would hide the workspace itself: the user chose to work there.
      denyRead: denyRead.filter((rule) => {
        const holds = roots.find((root) => coveringRule([rule], root))
        const note = `${rule.rule} ${holds}`
        if (holds && !this.warned.has(note)) {
          this.warned.add(note)
          // Info, not a warning: working inside a secret folder is the user's choice, not a mistake.
          this.ctx.logger('sandbox-policy').info('secret path rule %s left out: it covers the writable root %s', rule.rule, holds)
        }
        return !holds
      }),
      readExceptions: [],
      protect: [...resolveRules(this.config.protect, bases, "the sandbox-policy row's protect"), ...resolveRules(this.ctx.settings.get('sandbox.protect'), bases, 'the setting sandbox.protect')],
    }
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
