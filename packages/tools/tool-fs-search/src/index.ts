import type { Context } from '@dsh/cordis'
import { Config } from './config.ts'
import { globTool } from './glob.ts'
import { grepTool } from './grep.ts'
import { contributeSearchSection } from './prompt.ts'

export { Config }
export type { GlobArgs } from './glob.ts'
export type { GrepArgs, GrepMode } from './grep.ts'
export { findRipgrep } from './ripgrep.ts'

export const name = 'tool-fs-search'
export const inject = ['tools', 'fs', 'subprocess', 'sandboxPolicy']

/**
 * The search tools (docs/architecture.md, "Layers"): `glob` and `grep`. The system ripgrep runs through ctx.subprocess when it is
 * found (it honours .gitignore and is fast), confined read-only by ctx.sandbox so secret paths are hidden
 * from it; otherwise (no ripgrep, no working sandbox) a built-in search walks ctx.fs under the session's
 * authority, which leaves secret paths out. Results read relative to the session's working directory,
 * sorted, capped with a note.
 */
export function apply(ctx: Context, config: Config) {
  contributeSearchSection(ctx)
  ctx.tools.register(ctx, globTool(ctx, config))
  ctx.tools.register(ctx, grepTool(ctx, config))
}
