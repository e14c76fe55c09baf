import type { Context } from '@dsh/cordis'
import {
  admit, Fs, FsIoConfig, listDirectory, makeDirectory, pathExists, readAllBytes, readTextRange, removeEntry, renameEntry,
  resolveRealPath, sniffBinaryFile, statPath, walkTree, writeFileAtomically,
  type FsEntry, type FsStat, type MkdirOptions, type MkdirResult, type ReadBytesOptions, type ReadTextOptions,
  type ReadTextResult, type RemoveOptions, type RenameOptions, type ReplaceFileOptions, type WalkOptions,
  type WriteFileOptions, type WriteResult,
} from '@dsh/fs'

export type Config = FsIoConfig
export { admit, type Admission, type Reach, type WriteKind } from '@dsh/fs'

/**
 * ctx.fs on the local disk with every write fenced by the authority it carries (DESIGN §8): read-only
 * refuses, workspace-write admits only real paths inside the writable roots, danger-full-access admits all.
 * The refusal comes before any effect; reads are not fenced.
 */
export default class SandboxFs extends Fs {
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
    const { target, guard } = await admit('write', path, options.authority, 'through')
    return writeFileAtomically(target, data, { createParents: options.createParents, mode: options.mode, fsync: this.config.fsync, guard })
  }
  async replaceFile(path: string, data: string | Uint8Array, options: ReplaceFileOptions): Promise<WriteResult> {
    const { target, guard } = await admit('write', path, options.authority, 'through')
    return writeFileAtomically(target, data, { mustExist: true, expect: options.expect, fsync: this.config.fsync, guard })
  }
  async mkdir(path: string, options: MkdirOptions): Promise<MkdirResult> {
    const { target, guard } = await admit('create directory', path, options.authority, 'through')
    return makeDirectory(target, { recursive: options.recursive ?? true, guard })
  }
  async remove(path: string, options: RemoveOptions): Promise<void> {
    const { target, guard } = await admit('remove', path, options.authority, 'entry')
    return removeEntry(target, { recursive: options.recursive ?? false, guard })
  }
  async rename(from: string, to: string, options: RenameOptions): Promise<void> {
    const source = await admit('rename', from, options.authority, 'entry')
    const destination = await admit('rename onto', to, options.authority, 'entry')
    // One guard serves both directories: it re-checks against the same authority's roots.
    return renameEntry(source.target, destination.target, { overwrite: options.overwrite ?? false, guard: source.guard ?? destination.guard })
  }
}
