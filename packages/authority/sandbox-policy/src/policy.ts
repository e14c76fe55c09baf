import { realpathSync } from 'node:fs'
import { tmpdir } from 'node:os'
import type {} from '@dsh/app'
import { assertActor, type AuthorityActor } from '@dsh/authority-rules'
import { type Context, Service } from '@dsh/cordis'
import type {} from '@dsh/network'
import {
  SANDBOX_MODES,
  type PathAuthority,
  type SandboxAuthority,
  type SandboxMode,
  type SandboxNetwork,
  type SandboxProbe,
} from '@dsh/sandbox'
import { coveringRule, within } from '@dsh/sandbox-rules'
import Schema from '@dsh/schemastery'
import type { Session } from '@dsh/session'
import type {} from '@dsh/settings'
import type {} from '@dsh/spill'
import { SandboxCeilingData, SandboxModeData, SandboxProbeData, storedModeProblem } from './events.ts'
import { currentHome, realPathOf, realPrefix, resolveRules, type RuleBases } from './paths.ts'
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

/** Secret paths of every session (docs/security.md): credentials, keys, cloud and registry tokens, browser profiles. */
export const DEFAULT_DENY_READ = [
  '$DSH_HOME',
  // The grants' integrity key, named on its own so it stays hidden even where the rule above is left out
  // (a workspace inside $DSH_HOME): a command that read it could forge grants (docs/security.md).
  '$DSH_HOME/grants.key',
  // The web sign-in key, for the same reason: a command that read it could sign a browser in (docs/security.md).
  '$DSH_HOME/web.key',
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
 * Files in the user's home that something unconfined runs later (docs/security.md, "The user's home"): shell
 * startup files, git's config, the user's own bin folders, autostart entries and systemd user units, editor
 * and language-tool config that executes. They matter when the home (or a folder holding them) is a writable
 * root; `~/.npmrc` and `~/.pypirc` are secret paths already (DEFAULT_DENY_READ).
 */
export const DEFAULT_HOME_PROTECT = [
  '~/.bashrc',
  '~/.bash_profile',
  '~/.bash_login',
  '~/.bash_logout',
  '~/.profile',
  '~/.zshrc',
  '~/.zshenv',
  '~/.zprofile',
  '~/.zlogin',
  '~/.zlogout',
  '~/.config/fish',
  '~/.gitconfig',
  '~/.config/git',
  '~/.local/bin',
  '~/bin',
  '~/.config/autostart',
  '~/.config/systemd',
  '~/.vimrc',
  '~/.vim',
  '~/.config/nvim',
  '~/.emacs',
  '~/.emacs.d',
  '~/.config/pip/pip.conf',
  '~/.pip',
  '~/.cargo/config',
  '~/.cargo/config.toml',
]

/**
 * Protected paths of every writable root: what something unconfined later runs or obeys (git's hooks and
 * config, dsh's and other agents' and editors' workspace config, direnv's `.envrc`, husky's hooks).
 * Every folder dsh loads skills, commands, agents or hooks from by default is among them (`.dsh/`, `.claude/`,
 * `.agents/`). `AGENTS.md` and `CLAUDE.md` are instructions, not configuration, and stay writable. A missing
 * one is fenced in the sandbox too (an empty read-only folder mounted while a command runs, removed after).
 */
export const DEFAULT_PROTECT = [
  '.git/',
  '.dsh/',
  '.claude/',
  '.agents/skills/',
  '.vscode/',
  '.mcp.json',
  '.idea',
  '.cursor',
  '.zed',
  '.envrc',
  '.husky',
  '.devcontainer',
  ...DEFAULT_HOME_PROTECT,
]

/** Said once when a session starts in the user's home (the CLI's stderr; the web picker shows its own). */
export const HOME_WARNING =
  'the workspace %s is your home folder: the model may change any file in it except secret and protected ones (shell startup files, git config, ~/.local/bin, editor and tool config: docs/security.md); start dsh in a project folder unless you mean it'

const isMode = (value: unknown): value is SandboxMode => SANDBOX_MODES.includes(value as SandboxMode)

/**
 * The authority an agent acts under (docs/security.md), derived from its session log every time it is asked, so a
 * switch takes effect at the next call and a resumed session keeps what it chose. Owns: the `sandbox/mode`
 * and `sandbox/probe` kinds, the mode in force, the writable roots, the record of the backend probe. Must not
 * own: enforcing the authority (ctx.fs, ctx.shell and ctx.sandbox do), approval policy (ctx.approval), or
 * presets (ctx.permissionPresets, which sets modes through `setMode` and may supply the default).
 */
export class SandboxPolicy extends Service {
  static inject = ['sessions', 'settings', 'app']
  static Config: Schema<Partial<Config>, Config> = Schema.object({
    mode: Schema.union(SANDBOX_MODES)
      .default('workspace-write')
      .description(
        "Mode of sessions whose log chose none (a mounted permission-presets row supplies its default preset's mode first).",
      ),
    writableRoots: Schema.array(Schema.string())
      .default([])
      .description(
        "Absolute directories writable besides the session's working directory (missing ones are left out).",
      ),
    tempDir: Schema.boolean()
      .default(false)
      .description(
        'Also make the OS temp directory writable. Off: it is shared with every other program; commands under bubblewrap get a private /tmp anyway.',
      ),
    denyRead: Schema.array(Schema.string())
      .default(DEFAULT_DENY_READ)
      .description(
        'Secret paths (with the `sandbox.denyRead` setting): ~/…, $DSH_HOME/…, absolute, or relative to each writable root; globs per segment, `**` only at the end.',
      ),
    protect: Schema.array(Schema.string())
      .default(DEFAULT_PROTECT)
      .description(
        'Read-only paths inside the writable roots (with the `sandbox.protect` setting): relative to each root, or absolute.',
      ),
  })

  private readonly defaults: (() => SandboxMode | undefined)[] = []
  /** Protect rules of the folders and files mounted plugins load instructions from (see `protectLoaded`). */
  private readonly loaded: { rules: readonly string[]; source: string }[] = []
  private readonly probes = new WeakMap<Session, Promise<SandboxProbe | undefined>>()
  /** Rules left out for covering a writable root, warned about once each. */
  private readonly warned = new Set<string>()
  /** Bumped whenever a plugin's loaded folders are protected or released (a key of the rules memo). */
  private loadedRevision = 0
  /**
   * Per session, the path rules last derived (frozen), the inputs they came from, and the real form each
   * lexical pattern had on the disk: a call with the same inputs and the same real forms gets them again.
   */
  private readonly rulesMemo = new WeakMap<Session, { key: string; rules: PathAuthority; reals: Map<string, string> }>()

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
      description:
        'More read-only paths inside the writable roots, besides .git, .dsh and the agent and editor config folders (relative to each writable root, or absolute).',
    })
    ctx.on('session/workspace-refused', (cwd) => this.workspaceRefusal(cwd))
    ctx.on('session/opened', (session, how) => {
      if (how !== 'resumed') this.warnHome(session.cwd)
    })
    // Fail loud at start: a rule that cannot be applied stops the boot, naming it, rather than every later call.
    this.pathRules(ctx.app.cwd ? [ctx.app.cwd] : [])
  }

  /**
   * Why no session may work in `cwd`: it is dsh's home or inside it, where the model could rewrite the
   * settings, grants and patch layers the next session obeys (docs/security.md). Asked by ctx.sessions before
   * every create, resume and fork, so the CLI, the web host, the SDK and ACP refuse alike.
   */
  workspaceRefusal(cwd: string): string | undefined {
    const home = realPathOf(this.ctx.app.home)
    if (!within(realPathOf(cwd), home)) return undefined
    return (
      `"${cwd}" is dsh's home ($DSH_HOME, ${home}) or inside it: a session there could rewrite dsh's own settings, grants and patch layers, so none is started. ` +
      'Start dsh in another folder; change settings in `dsh web` (Settings), or edit the files in $DSH_HOME yourself, outside a session.'
    )
  }

  /**
   * Whether `cwd` is the user's home: then every file in it is writable by the model except the secret and
   * protected ones (shell startup files, git config, …; DEFAULT_HOME_PROTECT), which a person should know.
   */
  isHome(cwd: string): boolean {
    return realPathOf(cwd) === realPathOf(currentHome())
  }

  private readonly warnedHomes = new Set<string>()
  private warnHome(cwd: string): void {
    if (!this.isHome(cwd) || this.warnedHomes.has(cwd)) return
    this.warnedHomes.add(cwd)
    this.ctx.logger('sandbox-policy').warn(HOME_WARNING, cwd)
  }

  /**
   * Protects `rules` (relative to each writable root, or `~/…`, absolute) for as long as `ctx` lives: the
   * folders and files a plugin loads skills, commands, agents or hooks from, as its config names them, so a
   * folder a user adds is protected by construction, not only the defaults (docs/security.md).
   */
  protectLoaded(ctx: Context, rules: readonly string[], source: string): void {
    resolveRules(rules, { home: currentHome(), dshHome: this.ctx.app.home, roots: [] }, source) // fail loud at start
    const entry = { rules, source }
    ctx.effect(() => {
      this.loaded.push(entry)
      this.loadedRevision++
      return () => {
        this.loaded.splice(this.loaded.indexOf(entry), 1)
        this.loadedRevision++
      }
    }, `protected folders of ${source}`)
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
    for (const event of session.all('sandbox/ceiling'))
      if (!lowest || SANDBOX_MODES.indexOf(event.data.mode) < SANDBOX_MODES.indexOf(lowest)) lowest = event.data.mode
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
    for (const { path, why } of skipped)
      this.ctx.logger('sandbox-policy').warn('writable root %s left out: %s', path, why)
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
    const paths = this.sessionPathRules(session, roots)
    const spill = this.ctx.get('spillStore')?.readableDir(session.id)
    // As written and as its real path: the read fence compares real paths.
    if (spill) paths.readExceptions.push(...new Set([spill, realPathOf(spill)]))
    return { mode, writableRoots: mode === 'read-only' ? [] : roots, paths, network: await this.network(session, mode) }
  }

  /**
   * `pathRules(roots)` for the session's next authority, memoized (docs/performance.md: deriving them was
   * most of an authority's ~2 ms, asked for on every tool call). Never stale: the memo is keyed by every
   * input the rules derive from but the disk (the roots, both homes, the two settings' values, this row's
   * loaded folders), and the disk is asked again each time: every lexical pattern's real form must be the one
   * the rules were built with (a link made since, by the model in a writable root or by anyone elsewhere,
   * derives them anew). The mode, the roots and the network are derived on every call, so a mode change, a
   * setting and a grant count from the next call on.
   */
  private sessionPathRules(session: Session, roots: string[]): PathAuthority {
    const bases = this.ruleBases(roots)
    const key = JSON.stringify([
      bases,
      this.ctx.settings.get('sandbox.denyRead'),
      this.ctx.settings.get('sandbox.protect'),
      this.loadedRevision,
    ])
    let memo = this.rulesMemo.get(session)
    if (!memo || memo.key !== key || ![...memo.reals].every(([lexical, real]) => realPrefix(lexical) === real)) {
      const reals = new Map<string, string>()
      const rules = this.pathRules(roots, reals)
      for (const rule of [...rules.denyRead, ...rules.protect]) Object.freeze(rule)
      memo = { key, rules, reals }
      this.rulesMemo.set(session, memo)
    }
    // Fresh arrays: a caller adds its read exceptions (authority() the spill folder) to its own copy.
    return {
      denyRead: [...memo.rules.denyRead],
      readExceptions: [...memo.rules.readExceptions],
      protect: [...memo.rules.protect],
    }
  }

  private ruleBases(roots: string[]): RuleBases {
    let dshHome = this.ctx.app.home
    try {
      dshHome = realpathSync.native(dshHome)
    } catch {
      // not created yet: the written path is the only one
    }
    return { home: currentHome(), dshHome, roots }
  }

  /**
   * The secret and protected paths, resolved under `roots` (the real session cwd first, even in read-only:
   * a relative rule means the same place in every mode). Throws PathRuleError naming a bad rule and where.
   * `reals` records each lexical pattern's real form (see `sessionPathRules`).
   */
  pathRules(roots: string[], reals?: Map<string, string>): PathAuthority {
    const bases = this.ruleBases(roots)
    const denyRead = [
      // dsh's own home whatever the row's list says: what the next session obeys is never the model's to write.
      ...resolveRules(['$DSH_HOME'], bases, 'the sandbox policy', reals),
      ...resolveRules(this.config.denyRead, bases, "the sandbox-policy row's denyRead", reals),
      ...resolveRules(this.ctx.settings.get('sandbox.denyRead'), bases, 'the setting sandbox.denyRead', reals),
    ]
    return {
      // A secret rule covering a writable root would hide the workspace itself: the user chose to work there.
      denyRead: denyRead.filter((rule) => {
        const holds = roots.find((root) => coveringRule([rule], root))
        const note = `${rule.rule} ${holds}`
        if (holds && !this.warned.has(note)) {
          this.warned.add(note)
          // Info, not a warning: working inside a secret folder is the user's choice, not a mistake.
          this.ctx
            .logger('sandbox-policy')
            .info('secret path rule %s left out: it covers the writable root %s', rule.rule, holds)
        }
        return !holds
      }),
      readExceptions: [],
      protect: [
        ...resolveRules(this.config.protect, bases, "the sandbox-policy row's protect", reals),
        ...resolveRules(this.ctx.settings.get('sandbox.protect'), bases, 'the setting sandbox.protect', reals),
        ...this.loaded.flatMap(({ rules, source }) => resolveRules(rules, bases, source, reals)),
      ],
    }
  }

  /**
   * The network of a mode: the host's when unconfined; in a confined mode the session's allow-list proxy
   * when a network row is mounted, else none at all (docs/security.md: confined modes have no network).
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
    const probe: SandboxProbe = {
      backend: found.backend,
      available: found.available,
      reason: found.reason,
      ...(found.executable ? { executable: found.executable } : {}),
    }
    const last = session.last('sandbox/probe')?.data
    if (!session.closed && (!last || JSON.stringify(last) !== JSON.stringify(probe)))
      session.append('sandbox/probe', probe)
    return probe
  }
}
