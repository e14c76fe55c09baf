import type { Context } from '@dsh/cordis'
import type {} from '@dsh/credentials'
import { entryBytes, MEMORY_SCOPES, type MemoryFile } from '@dsh/memory'
import type { SessionEventMap } from '@dsh/session'
import { memoryLimits } from './settings.ts'

type Loaded = SessionEventMap['memory/loaded']
type FileFacts = Loaded['files'][number]

/**
 * What a new session in `cwd` reads: each memory file's entries as far as `memory.maxBytes` reaches (a file a
 * person grew by hand past it is cut, saying how many entries were left out), a credential value in an entry
 * replaced by a marker, and the message text. Undefined when both files are empty.
 */
export async function gatherMemory(ctx: Context, cwd: string, intro: string): Promise<Loaded | undefined> {
  const { maxBytes } = memoryLimits(ctx)
  const redact = (text: string) => ctx.get('credentials')?.redact(text) ?? text
  const files: FileFacts[] = []
  for (const scope of MEMORY_SCOPES) {
    const file = await ctx.memory.read(scope, cwd)
    if (file.entries.length) files.push(facts(file, maxBytes, redact))
  }
  if (!files.length) return undefined
  return { files, content: [{ type: 'text', text: memoryText(files, intro) }] }
}

function facts(file: MemoryFile, maxBytes: number, redact: (text: string) => string): FileFacts {
  const kept: string[] = []
  let bytes = 0
  for (const entry of file.entries) {
    if (bytes + entryBytes(entry) > maxBytes) break
    bytes += entryBytes(entry)
    kept.push(redact(entry))
  }
  const omitted = file.entries.length - kept.length
  return {
    scope: file.scope,
    path: file.path,
    ...(file.workspace ? { workspace: file.workspace } : {}),
    entries: kept,
    bytes,
    ...(omitted ? { omitted } : {}),
  }
}

/** The message the model reads: the intro, then each file's numbered entries (the numbers /memory uses). */
export function memoryText(files: readonly FileFacts[], intro: string): string {
  const blocks = files.map((file) => {
    const where = file.workspace ? ` workspace="${file.workspace}"` : ''
    const lines = file.entries.map((entry, index) => `${index + 1}. ${entry}`)
    if (file.omitted) lines.push(`[… ${file.omitted} more entries left out: the file passes memory.maxBytes …]`)
    return `<memory scope="${file.scope}"${where}>\n${lines.join('\n')}\n</memory>`
  })
  return `${intro}\n\n${blocks.join('\n\n')}`
}
