import type { Context } from '@dsh/cordis'
import {
  Fs, FsIoConfig, listDirectory, makeDirectory, pathExists, readAllBytes, readTextRange, removeEntry, renameEntry,
  resolveEntryPath, resolveRealPath, sniffBinaryFile, statPath, walkTree, writeFileAtomically,
  type FsEntry, type FsStat, type MkdirOptions, type MkdirResult, type ReadBytesOptions, type ReadTextOptions,
  type ReadTextResult, type RemoveOptions, type RenameOptions, type ReplaceFileOptions, type WalkOptions,
  type WriteFileOptions, type WriteResult,
} from '@dsh/fs'

export type Config = FsIoConfig

/**
 * ctx.fs on the local disk with no fence: the authority every write carries is accepted and not enforced.
 * For compositions that confine nothing (the "minimal" patch) or confine elsewhere.
 */
export default class LocalFs extends Fs {
  static Config = FsIoConfig

  constructor(ctx: Context, public config: Config) {
    super(ctx)
  }

  stat(path: string, options?: { followSymlinks?: boolean }): Promise<FsStat> {
    return statPath(path, options?.followSymlinks ?? true)
  }
  exists(path: string): Promise<boolean> {
    return pathExists(path)
  }
  realpath(path: string): Promise<string> {
    return resolveRealPath(path)
  }
  readText(path: string, options: ReadTextOptions = {}): Promise<ReadTextResult> {
    return readTextRange(path, options, this.config)
  }
  readBytes(path: string, options: ReadBytesOptions = {}): Promise<Uint8Array> {
    return readAllBytes(path, options, this.config)
  }
  isBinary(path: string): Promise<boolean> {
    return sniffBinaryFile(path, this.config)
  }
  list(path: string): Promise<FsEntry[]> {
    return listDirectory(path)
  }
  walk(path: string, options?: WalkOptions): AsyncIterable<FsEntry> {
    return walkTree(path, options)
  }

  async writeFile(path: string, data: string | Uint8Array, options: WriteFileOptions): Promise<WriteResult> {
    const target = await resolveRealPath(path)
    return writeFileAtomically(target, data, { createParents: options.createParents, mode: options.mode, fsync: this.config.fsync })
  }
  async replaceFile(path: string, data: string | Uint8Array, options: ReplaceFileOptions): Promise<WriteResult> {
    const target = await resolveRealPath(path)
    return writeFileAtomically(target, data, { mustExist: true, expect: options.expect, fsync: this.config.fsync })
  }
  async mkdir(path: string, options: MkdirOptions): Promise<MkdirResult> {
    return makeDirectory(await resolveRealPath(path), { recursive: options.recursive ?? true })
  }
  async remove(path: string, options: RemoveOptions): Promise<void> {
    return removeEntry(await resolveEntryPath(path), { recursive: options.recursive ?? false })
  }
  async rename(from: string, to: string, options: RenameOptions): Promise<void> {
    return renameEntry(await resolveEntryPath(from), await resolveEntryPath(to), { overwrite: options.overwrite ?? false })
  }
}
