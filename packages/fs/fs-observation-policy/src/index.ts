import { resolve } from 'node:path'
import type { Context } from '@dsh/cordis'
import { FsError, type FsVersion } from '@dsh/fs'
import Schema from '@dsh/schemastery'
import type { Session } from '@dsh/session'
import type { ToolInvocation } from '@dsh/tools'
import { FsObservedData, ObservationFold } from './observations.ts'

export { ObservationFold, type Observation } from './observations.ts'

export interface Config {
  readTools: string[]
  editTools: string[]
  pathArgument: string
  commandArgument: string
}

export const name = 'fs-observation-policy'
export const inject = ['sessions', 'tools', 'fs']

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  readTools: Schema.array(Schema.string())
    .default(['read', 'str_replace_editor:view'])
    .description('Calls that read a file: `tool` or `tool:command` (matched against the command argument).'),
  editTools: Schema.array(Schema.string())
    .default([
      'write',
      'edit',
      'str_replace_editor:create',
      'str_replace_editor:str_replace',
      'str_replace_editor:insert',
      'str_replace_editor:undo_edit',
    ])
    .description(
      'Calls that change an existing file: refused unless it was read and is unchanged since; a success counts as having seen the result.',
    ),
  pathArgument: Schema.string().default('path').description('The argument naming the file, in every listed tool.'),
  commandArgument: Schema.string().default('command').description('The argument a `tool:command` entry matches.'),
})

const sameVersion = (a: FsVersion, b: FsVersion) => a.mtimeMs === b.mtimeMs && a.size === b.size

/**
 * Read before edit (docs/architecture.md, "Layers"): an edit or overwrite of an existing file the agent has not read in this
 * session, or that changed on disk since it last read it, is denied in `tools/pre-execute`, before any
 * effect, telling the model to read it first. What was read is derived from the log (ObservationFold), so
 * it survives resume; the version each read saw is logged as `fs/observed` next to the call.
 */
export function apply(ctx: Context, config: Config) {
  ctx.sessions.defineKind(ctx, 'fs/observed', { ignorable: true, schema: FsObservedData })
  const folds = new WeakMap<Session, ObservationFold>()
  const foldOf = (session: Session) => {
    let fold = folds.get(session)
    if (!fold) folds.set(session, (fold = new ObservationFold()))
    return fold.update(session.events)
  }

  const kindOf = (invocation: ToolInvocation): 'read' | 'edit' | undefined => {
    const args = invocation.arguments as Record<string, unknown>
    const command = args?.[config.commandArgument]
    const names = [invocation.name, ...(typeof command === 'string' ? [`${invocation.name}:${command}`] : [])]
    if (names.some((entry) => config.editTools.includes(entry))) return 'edit'
    if (names.some((entry) => config.readTools.includes(entry))) return 'read'
    return undefined
  }
  const fileOf = async (invocation: ToolInvocation) => {
    const path = (invocation.arguments as Record<string, unknown>)?.[config.pathArgument]
    return typeof path === 'string' ? ctx.fs.realpath(resolve(invocation.context.cwd, path)) : undefined
  }
  /** The version of a regular file, or undefined when there is none (absent, a directory, unreadable). */
  const versionOf = (file: string) =>
    ctx.fs.stat(file).then(
      (stat) => (stat.type === 'file' ? stat.version : undefined),
      (error: unknown) => (error instanceof FsError ? undefined : Promise.reject(error)),
    )

  ctx.on('tools/pre-execute', async (invocation, next) => {
    if (kindOf(invocation) !== 'edit') return next()
    const file = await fileOf(invocation)
    const current = file && (await versionOf(file))
    if (!file || !current) return next() // a new file: nothing to have read
    const shown = (invocation.arguments as Record<string, string>)[config.pathArgument]
    const readWith = config.readTools.map((entry) => entry.replace(':', ' ')).join(' or ')
    const seen = foldOf(invocation.context.session).last(file)
    if (!seen)
      return {
        action: 'deny',
        reason: `"${shown}" has not been read in this session. Read it first (${readWith}), then retry.`,
      }
    if (!sameVersion(seen.version, current)) {
      return {
        action: 'deny',
        reason: `"${shown}" changed on disk since you last read it (${new Date(seen.time).toISOString()}). Read it again (${readWith}), then retry.`,
      }
    }
    return next()
  })

  ctx.on('tools/execute', async (invocation, next) => {
    const kind = kindOf(invocation)
    if (!kind) return next()
    const file = await fileOf(invocation).catch(() => undefined)
    // A read's version is taken before it runs: a change while it reads then shows as a change.
    const before = kind === 'read' && file ? await versionOf(file).catch(() => undefined) : undefined
    const result = await next()
    if (!file || result.error) return result
    const version = kind === 'read' ? before : await versionOf(file).catch(() => undefined)
    if (version && !invocation.context.session.closed)
      invocation.context.session.append('fs/observed', { callId: invocation.callId, path: file, version })
    return result
  })
}
