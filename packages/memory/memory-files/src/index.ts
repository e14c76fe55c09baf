// Memory files on local disk (docs/architecture.md, "Memory").
import { createHash, randomUUID } from 'node:crypto'
import { chmod, mkdir, readFile, realpath, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Context } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type {} from '@dsh/app'
import {
  entryBytes,
  Memory,
  MemoryError,
  sanitizeEntry,
  type MemoryFile,
  type MemoryLimits,
  type MemoryScope,
} from '@dsh/memory'

export interface Config {
  dir?: string
}

/** The comment a workspace file starts with, so a person who opens the folder knows which workspace it is. */
const HEADER = /^<!--[\s\S]*?-->\s*$/

/** Entries of a file's text: every non-blank line but the header comment, a leading `- ` or `* ` taken off. */
function parseEntries(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !HEADER.test(line))
    .map((line) => line.replace(/^[-*]\s+/, ''))
}

/**
 * `user.md` and `workspaces/<sha256 of the workspace's real path>.md` under `dir` ($DSH_HOME/memory): files
 * 0600, folders 0700, one entry a line (`- text`). A change is written to a temporary file and renamed over
 * the old one, so a reader never sees half a file; changes within this process are made one after another.
 */
export default class MemoryFiles extends Memory {
  static inject = ['app']
  static Config: Schema<Config> = Schema.object({
    dir: Schema.string().description('Where memory files are kept (default: $DSH_HOME/memory).'),
  })

  private readonly root: string
  private queue: Promise<unknown> = Promise.resolve()

  constructor(ctx: Context, config: Config) {
    super(ctx)
    this.root = config.dir ?? join(ctx.app.home, 'memory')
  }

  override async read(scope: MemoryScope, cwd: string): Promise<MemoryFile> {
    const { path, workspace } = await this.locate(scope, cwd)
    const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return ''
      throw error
    })
    const entries = parseEntries(text)
    return { scope, path, ...(workspace ? { workspace } : {}), entries, bytes: sizeOf(entries) }
  }

  override append(scope: MemoryScope, cwd: string, text: string, limits: MemoryLimits): Promise<MemoryFile> {
    return this.change(scope, cwd, (file) => {
      const entry = checked(text, limits, file.path)
      const next = [...file.entries, entry]
      if (sizeOf(next) > limits.maxBytes)
        throw new MemoryError(
          'MEMORY_FULL',
          `the ${scope} memory (${file.path}) is full: ${file.bytes} of ${limits.maxBytes} bytes used, the entry needs ${entryBytes(entry)}. Delete entries with /memory delete ${scope} <n>, or raise the memory.maxBytes setting.`,
        )
      return next
    })
  }

  override replace(
    scope: MemoryScope,
    cwd: string,
    entry: number,
    text: string,
    limits: MemoryLimits,
  ): Promise<MemoryFile> {
    return this.change(scope, cwd, (file) => {
      existing(file, entry)
      const next = file.entries.map((old, index) => (index === entry - 1 ? checked(text, limits, file.path) : old))
      if (sizeOf(next) > limits.maxBytes)
        throw new MemoryError(
          'MEMORY_FULL',
          `the ${scope} memory (${file.path}) would pass memory.maxBytes (${limits.maxBytes} bytes) with this entry.`,
        )
      return next
    })
  }

  override remove(scope: MemoryScope, cwd: string, entry: number): Promise<MemoryFile> {
    return this.change(scope, cwd, (file) => {
      existing(file, entry)
      return file.entries.filter((_, index) => index !== entry - 1)
    })
  }

  /** Reads, lets `edit` compute the new entries (or throw), writes; one change at a time. */
  private change(scope: MemoryScope, cwd: string, edit: (file: MemoryFile) => string[]): Promise<MemoryFile> {
    const run = this.queue.then(async () => {
      const file = await this.read(scope, cwd)
      const entries = edit(file)
      await this.write(file, entries)
      return { ...file, entries, bytes: sizeOf(entries) }
    })
    this.queue = run.catch(() => {})
    return run
  }

  private async write(file: MemoryFile, entries: string[]): Promise<void> {
    const dir = join(file.path, '..')
    await mkdir(dir, { recursive: true, mode: 0o700 })
    await chmod(this.root, 0o700)
    await chmod(dir, 0o700)
    const header = file.workspace ? `<!-- dsh workspace memory for ${file.workspace} -->\n` : ''
    const temporary = join(dir, `.${randomUUID()}.tmp`)
    try {
      await writeFile(temporary, header + entries.map((entry) => `- ${entry}\n`).join(''), { mode: 0o600, flag: 'wx' })
      await rename(temporary, file.path)
    } catch (error) {
      await rm(temporary, { force: true })
      throw error
    }
  }

  private async locate(scope: MemoryScope, cwd: string): Promise<{ path: string; workspace?: string }> {
    if (scope === 'user') return { path: join(this.root, 'user.md') }
    // The real path: two spellings of one folder (a link, `..`) share a memory, two folders never do.
    const workspace = await realpath(cwd)
    const key = createHash('sha256').update(workspace).digest('hex').slice(0, 32)
    return { path: join(this.root, 'workspaces', `${key}.md`), workspace }
  }
}

function sizeOf(entries: readonly string[]): number {
  return entries.reduce((sum, entry) => sum + entryBytes(entry), 0)
}

function checked(text: string, limits: MemoryLimits, path: string): string {
  const entry = sanitizeEntry(text)
  if (!entry) throw new MemoryError('MEMORY_EMPTY_ENTRY', `a memory entry needs some text (${path})`)
  if (entry.length > limits.maxEntryChars)
    throw new MemoryError(
      'MEMORY_ENTRY_TOO_LONG',
      `a memory entry may have ${limits.maxEntryChars} characters (memory.maxEntryChars); this one has ${entry.length}: say it shorter.`,
    )
  return entry
}

function existing(file: MemoryFile, entry: number): void {
  if (!Number.isInteger(entry) || entry < 1 || entry > file.entries.length)
    throw new MemoryError(
      'MEMORY_NO_ENTRY',
      `the ${file.scope} memory has no entry ${entry} (it has ${file.entries.length}; /memory lists them)`,
    )
}
