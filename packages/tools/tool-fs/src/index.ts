import type { Context } from '@dsh/cordis'
import { Config } from './config.ts'
import { editTool } from './edit.ts'
import { readTool } from './read.ts'
import { writeTool } from './write.ts'
import { contributeFilesSection } from './prompt.ts'

export { Config }
export type { ReadArgs } from './read.ts'
export type { WriteArgs } from './write.ts'
export type { EditArgs } from './edit.ts'

export const name = 'tool-fs'
export const inject = ['tools', 'fs', 'sandboxPolicy']

/**
 * The file tools (docs/architecture.md, "Layers"): `read`, `write`, `edit`, over ctx.fs. Relative paths resolve against the
 * session's working directory; every write carries the authority ctx.sandboxPolicy derives from the log, so
 * a fenced fs refuses what the mode does not allow (FS_SANDBOX_DENIED) before any effect.
 */
export function apply(ctx: Context, config: Config) {
  contributeFilesSection(ctx)
  ctx.tools.register(ctx, readTool(ctx, config))
  ctx.tools.register(ctx, writeTool(ctx, config))
  ctx.tools.register(ctx, editTool(ctx, config))
}
