import { lstat } from 'node:fs/promises'
import { dirname } from 'node:path'
import type {} from '@dsh/acp'
import {
  FsError,
  FsIoConfig,
  type FsVersion,
  type ReadBytesOptions,
  type ReadTextOptions,
  type ReadTextResult,
  type ReplaceFileOptions,
  type WriteFileOptions,
  type WriteResult,
} from '@dsh/fs'
import {
  admitRead,
  DiskFs,
  looksBinary,
  pathExists,
  readAllBytes,
  readTextRange,
  requireAbsolute,
  resolveRealPath,
  sniffBinaryFile,
  statPath,
  writeFileAtomically,
} from '@dsh/fs-disk'
import { sliceText } from './text.ts'

export type Config = FsIoConfig

/** What is on the local disk at a path, without following it anywhere unexpected. */
async function localState(
  path: string,
): Promise<{ exists: boolean; directory: boolean; version?: FsVersion; size?: number }> {
  try {
    const stats = await statPath(path)
    return { exists: true, directory: stats.type === 'directory', version: stats.version, size: stats.size }
  } catch {
    // A dangling link is "not there" for reading and a target for writing: lstat tells them apart if needed.
    return { exists: !!(await lstat(path).catch(() => undefined)), directory: false }
  }
}

const sameVersion = (a: FsVersion, b: FsVersion) => a.size === b.size && a.mtimeMs === b.mtimeMs

/**
 * ctx.fs for editor sessions (docs/architecture.md, "Surfaces"): while a tool runs for an ACP session whose editor offers
 * `fs/read_text_file` and `fs/write_text_file`, text reads and writes go through the editor, so the agent
 * sees unsaved buffers and the editor sees every change; everything else, and every call outside an editor
 * session, uses the local disk (`DiskFs`). Every write, the editor's included, passes the write fence of the
 * authority it carries before anything is sent or changed.
 */
export default class EditorFs extends DiskFs {
  static inject = ['acp']
  static Config = FsIoConfig

  /** The editor session to route a read through, if any. */
  private readSession(): string | undefined {
    return this.ctx.acp.canReadFiles ? this.ctx.acp.toolScope()?.sessionId : undefined
  }

  /** The editor session to route a write through, if any. */
  private writeSession(): string | undefined {
    return this.ctx.acp.canWriteFiles ? this.ctx.acp.toolScope()?.sessionId : undefined
  }

  /** A text file's bytes as the editor has them (an edit reads this way); images and binaries from the disk. */
  override async readBytes(path: string, options: ReadBytesOptions = {}): Promise<Uint8Array> {
    // The read fence comes first: a secret path is refused before the disk or the editor is asked anything.
    if (options.authority) await admitRead(path, options.authority)
    const sessionId = this.readSession()
    if (!sessionId || (await this.binaryOnDisk(path)))
      return readAllBytes(path, options, this.config, this.readCheck(options.authority))
    const { text } = await this.readFromEditor(sessionId, path)
    const bytes = Buffer.from(text, 'utf8')
    const limit = Math.min(options.maxBytes ?? this.config.maxFileBytes, this.config.maxFileBytes)
    if (bytes.length > limit)
      throw new FsError(
        'FS_TOO_LARGE',
        path,
        `"${path}" is ${bytes.length} bytes in the editor, more than the ${limit} bytes asked for at most`,
      )
    return new Uint8Array(bytes)
  }

  private async binaryOnDisk(path: string): Promise<boolean> {
    const local = await localState(path)
    return local.exists && !local.directory && local.version !== undefined && (await sniffBinaryFile(path, this.config))
  }

  override async readText(path: string, options: ReadTextOptions = {}): Promise<ReadTextResult> {
    if (options.authority) await admitRead(path, options.authority)
    const sessionId = this.readSession()
    if (!sessionId) return readTextRange(path, options, this.config, this.readCheck(options.authority))
    const { text, realPath, version } = await this.readFromEditor(sessionId, path)
    return sliceText(path, realPath, text, options, this.config, version)
  }

  /**
   * The whole text as the editor has it. What the disk says first: a directory, a binary or an oversized
   * file is refused as a local read would; the editor is asked only for text it can give.
   */
  private async readFromEditor(
    sessionId: string,
    path: string,
  ): Promise<{ text: string; realPath: string; version: FsVersion }> {
    requireAbsolute(path)
    const local = await localState(path)
    if (local.directory) throw new FsError('FS_IS_DIRECTORY', path, `"${path}" is a directory, not a file`)
    if (local.size !== undefined && local.size > this.config.maxFileBytes) {
      throw new FsError(
        'FS_TOO_LARGE',
        path,
        `"${path}" is ${local.size} bytes, more than the ${this.config.maxFileBytes} bytes this file system reads at once`,
      )
    }
    if (local.version && (await sniffBinaryFile(path, this.config))) {
      throw new FsError(
        'FS_BINARY',
        path,
        `"${path}" is not a text file (a NUL byte or invalid UTF-8 in its first ${this.config.binarySniffBytes} bytes)`,
      )
    }
    let text: string
    try {
      text = await this.ctx.acp.readTextFile(sessionId, path)
    } catch (error) {
      const why = (error as Error)?.message ?? String(error)
      if (!local.exists)
        throw new FsError(
          'FS_NOT_FOUND',
          path,
          `"${path}" does not exist (the editor could not open it either: ${why})`,
        )
      throw new FsError('FS_IO', path, `the editor could not read "${path}": ${why}`)
    }
    const size = Buffer.byteLength(text, 'utf8')
    if (size > this.config.maxFileBytes)
      throw new FsError(
        'FS_TOO_LARGE',
        path,
        `"${path}" is ${size} bytes in the editor, more than the ${this.config.maxFileBytes} bytes this file system reads at once`,
      )
    // Versions are the disk's (what stat reports, what a write's `expect` is checked against); a file only the
    // editor has (an unsaved new buffer) has none yet.
    return { text, realPath: await resolveRealPath(path), version: local.version ?? { mtimeMs: 0, size: 0 } }
  }

  override async writeFile(path: string, data: string | Uint8Array, options: WriteFileOptions): Promise<WriteResult> {
    const { target, guard } = await this.admit('write', path, options.authority, 'through')
    const sessionId = this.writeSession()
    const text = sessionId ? asText(data) : undefined
    if (!sessionId || text === undefined)
      return writeFileAtomically(target, data, {
        createParents: options.createParents,
        mode: options.mode,
        fsync: this.config.fsync,
        guard,
      })
    return this.writeThroughEditor(sessionId, path, target, text, {
      createParents: options.createParents,
      authority: options.authority,
    })
  }

  override async replaceFile(
    path: string,
    data: string | Uint8Array,
    options: ReplaceFileOptions,
  ): Promise<WriteResult> {
    const { target, guard } = await this.admit('write', path, options.authority, 'through')
    const sessionId = this.writeSession()
    const text = sessionId ? asText(data) : undefined
    if (!sessionId || text === undefined)
      return writeFileAtomically(target, data, {
        mustExist: true,
        expect: options.expect,
        fsync: this.config.fsync,
        guard,
      })
    const readSession = this.readSession()
    const local = await localState(target)
    // A file only the editor has still exists for a replacement.
    if (
      !local.exists &&
      !(
        readSession &&
        (await this.readFromEditor(readSession, path).then(
          () => true,
          () => false,
        ))
      )
    ) {
      throw new FsError('FS_NOT_FOUND', target, `"${target}" does not exist`)
    }
    const now = local.version ?? { mtimeMs: 0, size: 0 }
    if (options.expect && !sameVersion(options.expect, now)) {
      throw new FsError('FS_CHANGED', target, `"${target}" changed since it was read; read it again before writing`)
    }
    return this.writeThroughEditor(sessionId, path, target, text, { authority: options.authority })
  }

  private async writeThroughEditor(
    sessionId: string,
    path: string,
    target: string,
    text: string,
    options: { createParents?: boolean; authority: WriteFileOptions['authority'] },
  ): Promise<WriteResult> {
    const before = await localState(target)
    if (before.directory) throw new FsError('FS_IS_DIRECTORY', target, `"${target}" is a directory, not a file`)
    const parent = dirname(target)
    if (!(await pathExists(parent))) {
      if (!options.createParents) throw new FsError('FS_NOT_FOUND', target, `the directory "${parent}" does not exist`)
      // Parents are made here, fenced like the file, so the editor is only asked to write the file itself.
      await this.mkdir(parent, { authority: options.authority, recursive: true })
    }
    try {
      await this.ctx.acp.writeTextFile(sessionId, path, text)
    } catch (error) {
      throw new FsError('FS_IO', path, `the editor could not write "${path}": ${(error as Error)?.message ?? error}`)
    }
    // The disk's version after the editor wrote (it may have saved, or kept the change in its buffer).
    const after = await localState(target)
    return {
      path: target,
      bytes: Buffer.byteLength(text, 'utf8'),
      created: !before.exists,
      version: after.version ?? { mtimeMs: 0, size: 0 },
    }
  }
}

/** Text the editor can take: a string, or bytes that are UTF-8 text (other bytes are written locally). */
function asText(data: string | Uint8Array): string | undefined {
  if (typeof data === 'string') return data
  if (looksBinary(data)) return undefined
  return new TextDecoder('utf-8').decode(data)
}
