// Export and import of a session with its children as one .tar.gz (docs/architecture.md, "Finding sessions").
import { createReadStream, existsSync } from 'node:fs'
import { chmod, cp, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { create, extract, Parser, type ReadEntry } from 'tar'
import type { Context } from '@dsh/cordis'
import type {} from '@dsh/app'
import type { SessionHeader } from '@dsh/session'
import { SessionError } from '@dsh/session'
import type {} from '@dsh/spill'
import { ARCHIVE_FORMAT, entryProblem, MANIFEST, manifestProblem, type Manifest } from './archive-paths.ts'
import { SESSION_ID, withDescendants } from './delete.ts'
import { SessionAdminError } from './errors.ts'
import { checkImportedWorkspaces, resetImportedAuthority } from './import-authority.ts'

export interface ArchiveLimits {
  /** Largest archive file read. */
  maxArchiveBytes: number
  /** Most bytes its entries may unpack to (the sum of their sizes). */
  maxUnpackedBytes: number
  /** Most entries it may hold. */
  maxEntries: number
}

/**
 * What the stores keep beside a log that an archive does not carry: the writer lease (with what a crash in
 * the middle of taking it may leave: `lease.*` temp and takeover files) and the listing cache.
 */
const NOT_EXPORTED = new Set(['lease', 'meta.json', 'meta.json.tmp'])
const notExported = (name: string) => NOT_EXPORTED.has(name) || name.startsWith('lease.')

/**
 * Writes `file`: the session and its stored subagent children (logs, attachments, checkpoints) and their
 * spilled output. Live sessions of this process are flushed first. Refuses a file that exists.
 */
export async function exportSession(ctx: Context, id: string, file: string): Promise<Manifest> {
  if (!SESSION_ID.test(id)) throw new SessionAdminError('INVALID_ID', `"${id}" is not a session id`)
  if (existsSync(file)) throw new SessionAdminError('ARCHIVE_EXISTS', `${file} already exists; export to a new file`)
  const ids = await withDescendants(ctx, id)
  const staging = await mkdtemp(join(ctx.app.home, '.export-'))
  try {
    const tops = new Set(['sessions'])
    for (const each of ids) {
      await ctx.sessions.get(each)?.flush()
      // Copied, not linked: a hard link would be packed as a link entry, which an import refuses.
      await cp(await ctx.sessionPersistence.folderOf(each), join(staging, 'sessions', each), {
        recursive: true,
        verbatimSymlinks: true,
        filter: (source) => !notExported(basename(source)),
      })
      const spilled = ctx.get('spillStore')?.readableDir(each)
      if (spilled && existsSync(spilled)) {
        await cp(spilled, join(staging, 'spill', each), { recursive: true, verbatimSymlinks: true })
        tops.add('spill')
      }
    }
    const manifest: Manifest = { format: ARCHIVE_FORMAT, version: 1, session: id, sessions: ids }
    await writeFile(join(staging, MANIFEST), JSON.stringify(manifest, null, 2) + '\n')
    await mkdir(dirname(file), { recursive: true })
    // Only files and folders are packed: a symbolic link in a store (none is written there) is left out.
    await create(
      {
        gzip: true,
        file,
        cwd: staging,
        portable: true,
        filter: (_path, entry) => !('isSymbolicLink' in entry) || !entry.isSymbolicLink(),
      },
      [MANIFEST, ...tops],
    )
    return manifest
  } finally {
    await rm(staging, { recursive: true, force: true })
  }
}

/**
 * Reads every entry's header first and refuses the whole archive when one is not a plain file or folder at
 * a session path, or when the entries would unpack past the limits: nothing is written before that pass.
 */
async function checkEntries(file: string, limits: ArchiveLimits): Promise<void> {
  const size = (await stat(file)).size
  if (size > limits.maxArchiveBytes)
    throw new SessionAdminError(
      'ARCHIVE_TOO_LARGE',
      `${file} has ${size} bytes; at most ${limits.maxArchiveBytes} are read (session admin maxArchiveBytes)`,
    )
  let entries = 0
  let bytes = 0
  let problem: SessionAdminError | undefined
  await new Promise<void>((resolve, reject) => {
    const input = createReadStream(file)
    const parser = new Parser({
      strict: true,
      onReadEntry: (entry: ReadEntry) => {
        entries++
        bytes += entry.size
        const why = entryProblem(entry.path, entry.type)
        if (why) problem ??= new SessionAdminError('ARCHIVE_INVALID', `${file}: ${why}; nothing was imported`)
        else if (entries > limits.maxEntries)
          problem ??= new SessionAdminError(
            'ARCHIVE_TOO_LARGE',
            `${file} has more than ${limits.maxEntries} entries (session admin maxEntries)`,
          )
        else if (bytes > limits.maxUnpackedBytes)
          problem ??= new SessionAdminError(
            'ARCHIVE_TOO_LARGE',
            `${file} unpacks to more than ${limits.maxUnpackedBytes} bytes (session admin maxUnpackedBytes)`,
          )
        if (problem) {
          input.destroy()
          resolve()
        }
        entry.resume()
      },
    })
    parser.on('error', (error: Error) =>
      reject(new SessionAdminError('ARCHIVE_INVALID', `${file}: not a readable .tar.gz (${error.message})`)),
    )
    parser.on('end', () => resolve())
    input.on('error', reject)
    input.pipe(parser as unknown as NodeJS.WritableStream)
  })
  if (problem) throw problem
  if (!entries) throw new SessionAdminError('ARCHIVE_INVALID', `${file}: an empty archive`)
}

/** The modes the stores write (logs and tool output may hold anything): an archive's own modes are not kept. */
async function ownerOnly(dir: string): Promise<void> {
  await chmod(dir, 0o700)
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) await ownerOnly(path)
    else if (entry.isFile()) await chmod(path, 0o600)
  }
}

/** The header line of an unpacked log, checked against the id its folder claims. */
async function headerOf(folder: string, id: string, where: string): Promise<SessionHeader> {
  const text = await readFile(join(folder, 'session.jsonl'), 'utf8').catch(() => undefined)
  if (text === undefined)
    throw new SessionAdminError('ARCHIVE_INVALID', `${where}: sessions/${id}/session.jsonl is missing`)
  let header: SessionHeader | undefined
  try {
    header = JSON.parse(text.slice(0, text.indexOf('\n') >>> 0)) as SessionHeader
  } catch {
    header = undefined
  }
  if (header?.format !== 'dsh-session' || header.id !== id || typeof header.cwd !== 'string')
    throw new SessionAdminError(
      'ARCHIVE_INVALID',
      `${where}: sessions/${id}/session.jsonl:1: not the header of session ${id}`,
    )
  return header
}

/**
 * Unpacks an export into this home's stores. Refused as a whole (nothing left behind) for an entry outside
 * the session paths, a link, a size past the limits, a session id already stored here, or a log that does not
 * load (named `archive:sessions/<id>/session.jsonl:<line>`).
 */
export async function importSessions(ctx: Context, file: string, limits: ArchiveLimits): Promise<Manifest> {
  if (!existsSync(file)) throw new SessionAdminError('ARCHIVE_INVALID', `${file} does not exist`)
  await checkEntries(file, limits)
  const staging = await mkdtemp(join(ctx.app.home, '.import-'))
  const placed: string[] = []
  try {
    await extract({
      file,
      cwd: staging,
      strict: true,
      preservePaths: false,
      unlink: true,
      filter: (path, entry) => !entryProblem(path, (entry as ReadEntry).type),
    })
    await ownerOnly(staging)
    const manifest = JSON.parse(await readFile(join(staging, MANIFEST), 'utf8').catch(() => 'null')) as Manifest
    const bad = manifestProblem(manifest)
    if (bad) throw new SessionAdminError('ARCHIVE_INVALID', `${file}: ${bad}`)
    const moves: [from: string, to: string][] = []
    const headers = await Promise.all(manifest.sessions.map((id) => headerOf(join(staging, 'sessions', id), id, file)))
    const topCwd = headers[manifest.sessions.indexOf(manifest.session)]?.cwd ?? ''
    checkImportedWorkspaces(
      ctx,
      file,
      headers.map((header) => ({ id: header.id, cwd: header.cwd, top: header.id === manifest.session })),
      topCwd,
    )
    for (const [index, id] of manifest.sessions.entries()) {
      const header = headers[index]!
      // An id that is stored here is refused, not renamed: parents and children name each other by id.
      moves.push([join(staging, 'sessions', id), await ctx.sessionPersistence.folderFor(header)])
      const spillTo = ctx.get('spillStore')?.readableDir(id)
      if (spillTo && existsSync(join(staging, 'spill', id))) {
        if (existsSync(spillTo))
          throw new SessionAdminError(
            'ARCHIVE_EXISTS',
            `${file}: the spill folder ${spillTo} of session ${id} already exists`,
          )
        moves.push([join(staging, 'spill', id), spillTo])
      }
    }
    for (const [from, to] of moves) {
      await mkdir(dirname(to), { recursive: true, mode: 0o700 })
      await rename(from, to).catch(async (error: NodeJS.ErrnoException) => {
        if (error.code !== 'EXDEV') throw error
        await cp(from, to, { recursive: true })
      })
      placed.push(to)
    }
    for (const id of manifest.sessions) {
      const where = moves.find(([from]) => from === join(staging, 'sessions', id))![1]
      await ctx.sessions.read(id).catch((error: unknown) => {
        if (!(error instanceof SessionError)) throw error
        throw new SessionAdminError(
          'ARCHIVE_INVALID',
          `${file}: ${error.message.replaceAll(join(where, 'session.jsonl'), `sessions/${id}/session.jsonl`)}; nothing was imported`,
        )
      })
    }
    for (const id of manifest.sessions) await resetImportedAuthority(ctx, id)
    return manifest
  } catch (error) {
    for (const folder of placed) await rm(folder, { recursive: true, force: true })
    throw error
  } finally {
    await rm(staging, { recursive: true, force: true })
  }
}
