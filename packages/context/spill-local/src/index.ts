// The spill store on local disk (docs/architecture.md, "Context").
import { chmod, mkdir, open, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Context } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type {} from '@dsh/app'
import { SpillError, SpillStore, type SavedText, type SpillEntry, type SpilledText } from '@dsh/spill'
import { readEnds } from './ends.ts'

export interface Config {
  dir?: string
}

/** A file-name-safe form of an id (session and call ids come from providers; never trust them as paths). */
function safeName(id: string): string {
  const cleaned = id.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^\.+/, '_')
  return cleaned.slice(0, 120) || '_'
}

function countLines(text: string): number {
  if (!text) return 0
  let lines = 1
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) if (i < text.length - 1) lines++
  return lines
}

/**
 * Spilled texts as files: `<dir>/<session>/<call>.txt`, files 0600 and folders 0700 (tool output may hold
 * anything the tool saw). Files stay until someone removes them: they are part of the session's record.
 */
export default class LocalSpillStore extends SpillStore {
  static inject = ['app']
  static Config: Schema<Config> = Schema.object({
    dir: Schema.string().description('Where spilled tool output is written (default: $DSH_HOME/spill).'),
  })

  private readonly root: string

  constructor(ctx: Context, config: Config) {
    super(ctx)
    this.root = config.dir ?? join(ctx.app.home, 'spill')
  }

  override readableDir(sessionId: string): string {
    return join(this.root, safeName(sessionId))
  }

  override fileFor(sessionId: string, callId: string): string {
    return join(this.readableDir(sessionId), `${safeName(callId)}.txt`)
  }

  override async saved(
    sessionId: string,
    callId: string,
    ends: { headBytes: number; tailBytes: number },
  ): Promise<SavedText | undefined> {
    if (!sessionId || !callId) return undefined
    const path = this.fileFor(sessionId, callId)
    const file = await open(path, 'r').catch(() => undefined)
    if (!file) return undefined
    try {
      return { path, ...(await readEnds(file, ends)) }
    } finally {
      await file.close()
    }
  }

  async write(entry: SpillEntry): Promise<SpilledText> {
    if (!entry.sessionId || !entry.callId)
      throw new SpillError('SPILL_INVALID', 'a spilled text needs a session id and a call id')
    const dir = this.readableDir(entry.sessionId)
    const path = this.fileFor(entry.sessionId, entry.callId)
    try {
      await mkdir(dir, { recursive: true, mode: 0o700 })
      await writeFile(path, entry.text, { mode: 0o600 })
      await chmod(path, 0o600) // an existing file keeps its old mode on overwrite
    } catch (error) {
      throw new SpillError(
        'SPILL_WRITE_FAILED',
        `could not write the output of ${entry.tool} (call ${entry.callId}) to ${path}: ${error instanceof Error ? error.message : error}`,
        { cause: error },
      )
    }
    return { path, bytes: Buffer.byteLength(entry.text), lines: countLines(entry.text) }
  }
}
