import type {} from '@dsh/cordis'

/**
 * The facts of one launch, provided on the root context by app-boot before any row mounts
 * (docs/architecture.md, "Boot"). Owns: what was launched and how to end it. Must not own: parsing of
 * surface-specific flags (each surface reads `ctx.cmdlineArgs`) or any model-visible state.
 */
export interface AppInfo {
  /** Launcher version (the `dsh --version` string). */
  version: string
  profile: string
  /** The harness home (`$DSH_HOME`, default `~/.dsh`). */
  home: string
  /** The working directory the launcher was started in. */
  cwd: string
  /** Arguments left after the launcher's own options: they belong to the tree. */
  argv: string[]
  /**
   * The launch's standard streams: the process's own, or an in-process driver's (a test running `dsh` without a
   * process). A surface and the logger read and write these, never `process.std*` directly.
   */
  stdio: LaunchStdio
  /** The composed tree as YAML with layer comments (what `--dump-config` prints). */
  dumpConfig(): string
  /**
   * Asks the launcher to drain the tree and exit with `code`. A surface calls this when its job is done
   * (headless after its task); the launcher owns the process.
   */
  requestExit(code: number): void
  /**
   * The plugin of an installed package, resolved the way composition resolves a row's bare name (each bundle
   * of the profile in order): for a plugin that mounts rows after boot (an agent preset's per-agent plugins).
   * Rejects, naming the package, when no bundle has it; a path is refused.
   */
  resolvePlugin(name: string): Promise<unknown>
}

/** Standard input, output and error of one launch. */
export interface LaunchStdio {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean }
  stdout: NodeJS.WritableStream & { isTTY?: boolean }
  stderr: NodeJS.WritableStream & { isTTY?: boolean }
}

/**
 * Marks an error that the launcher reports itself (a row that failed while the tree booted): log exporters
 * skip errors carrying it, so the user reads one message, not two.
 */
export const REPORTED_BY_LAUNCHER = Symbol.for('dsh.app.reportedByLauncher')

/** Why the launcher is about to drain the tree. */
export interface DrainReason {
  /** The exit code the launch will end with. */
  code: number
  /** The signal that ended the launch (`SIGINT`, `SIGTERM`), absent after `requestExit`. */
  signal?: string
}

declare module '@dsh/cordis' {
  interface Context {
    app: AppInfo
  }
  interface Events {
    /**
     * @mode emit — the launcher booted the whole tree (every row settled) and hands the launch to the
     * surfaces: a surface starts its work here. Not emitted by `--check`, nor for a tree a test boots
     * in-process, so a surface mounted there stays inert.
     */
    'app/launched'(): void
    /**
     * @mode serial — the launcher is about to drain the tree (a signal, or `requestExit`) while every
     * service is still up: a surface stops its running work here and waits until it is durable (a turn
     * cancelled, its `turn/end` logged and flushed). Disposal runs every plugin's effects at once, so this is
     * the last point where the log can still be written. A second signal exits without waiting.
     */
    'app/draining'(reason: DrainReason): Promise<void>
  }
}
