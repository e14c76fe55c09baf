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
  /** The composed tree as YAML with layer comments (what `--dump-config` prints). */
  dumpConfig(): string
  /**
   * Asks the launcher to drain the tree and exit with `code`. A surface calls this when its job is done
   * (headless after its task); the launcher owns the process.
   */
  requestExit(code: number): void
}

declare module '@dsh/cordis' {
  interface Context {
    app: AppInfo
  }
}
