/**
 * One path rule of the authority: `rule` as the user or the default list wrote it (shown in refusals),
 * `pattern` the absolute glob it resolved to (`~` and `$DSH_HOME` expanded, real paths where they exist).
 * A rule covers the paths its pattern matches and everything beneath them (a trailing `/**` is optional).
 * Globs (`*`, `?`, `[…]`, `{a,b}`) may appear in any segment; `**` only as the last one.
 */
export interface PathRule {
  rule: string
  pattern: string
  /**
   * Written with a trailing `/` (`.dsh/`): it names a directory, so a confinement backend fences it even
   * while it does not exist (bubblewrap mounts an empty read-only folder there, left behind as an empty
   * directory). Without it, a missing path is fenced by the file tools only.
   */
  directory?: boolean
}

/**
 * The path parts of an authority (docs/security.md), resolved by the sandbox policy for one session:
 * - `denyRead`: secret paths, never read by a tool for the model nor visible to a confined command;
 * - `readExceptions`: absolute directories inside a secret path that stay readable (the session's own spill
 *   folder under `$DSH_HOME`), never writable;
 * - `protect`: paths inside the writable roots that stay read-only (`.git`, agent and editor config).
 */
export interface PathAuthority {
  denyRead: PathRule[]
  readExceptions: string[]
  protect: PathRule[]
}
