import type { Context } from '@dsh/cordis'
import type { SandboxAuthority } from '@dsh/sandbox'
import type { FsIoConfig } from '@dsh/fs'
import { realpath } from 'node:fs/promises'
import { join } from 'node:path'
import { admit, admitRead, secretEntry, type Admission, type Reach, type WriteKind } from './fence.ts'
import { Fs } from '@dsh/fs'
import { listDirectory, walkTree } from './local/list.ts'
import { resolveRealPath } from './local/paths.ts'
import { pathExists, readAllBytes, readTextRange, sniffBinaryFile, statPath, type ReadCheck } from './local/read.ts'
import { makeDirectory, removeEntry, renameEntry, writeFileAtomically } from './local/write.ts'
import type {
  FsEntry,
  FsStat,
  MkdirOptions,
  MkdirResult,
  ReadBytesOptions,
  ReadOptions,
  ReadTextOptions,
  ReadTextResult,
  RemoveOptions,
  RenameOptions,
  ReplaceFileOptions,
  WalkOptions,
  WriteFileOptions,
  WriteResult,
} from '@dsh/fs'

/**
 * `Fs` on the local disk, shared by the local providers (fs-fenced, fs-local, fs-acp) so they differ only
 * where they mean to. Every change passes `admit` first, before any effect: the write fence by default (fail
 * closed); a provider that confines nothing overrides it.
 */
export abstract class DiskFs extends Fs {
  constructor(
    ctx: Context,
    public config: FsIoConfig,
  ) {
    super(ctx)
  }

  /** Where a change of `path` lands and the guard that re-checks its directories; refuses before any effect. */
  protected admit(kind: WriteKind, path: string, authority: SandboxAuthority, reach: Reach): Promise<Admission> {
    return admit(kind, path, authority, reach)
  }

  /** The read fence for a read carrying an authority (none for reads dsh makes for itself). */
  protected readCheck(authority: SandboxAuthority | undefined): ReadCheck | undefined {
    if (!authority) return undefined
    return async (path, real) => {
      await admitRead(path, authority)
      await admitRead(real, authority)
    }
  }

  /** Leaves out the entries a secret rule covers (as listed, and where they really are). */
  private async secretFilter(
    dir: string,
    authority: SandboxAuthority | undefined,
  ): Promise<((entry: FsEntry) => boolean) | undefined> {
    if (!authority) return undefined
    await admitRead(dir, authority)
    const realDir = await realpath(dir).catch(() => dir)
    return (entry) => secretEntry(authority, entry.path) || secretEntry(authority, join(realDir, entry.relativePath))
  }

  async checkWrite(path: string, authority: SandboxAuthority): Promise<void> {
    await this.admit('write', path, authority, 'through')
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
    return readTextRange(path, options, this.config, this.readCheck(options.authority))
  }
  readBytes(path: string, options: ReadBytesOptions = {}): Promise<Uint8Array> {
    return readAllBytes(path, options, this.config, this.readCheck(options.authority))
  }
  isBinary(path: string, options: ReadOptions = {}): Promise<boolean> {
    return sniffBinaryFile(path, this.config, this.readCheck(options.authority))
  }
  async list(path: string, options: ReadOptions = {}): Promise<FsEntry[]> {
    const secret = await this.secretFilter(path, options.authority)
    const entries = await listDirectory(path)
    return secret ? entries.filter((entry) => !secret(entry)) : entries
  }
  async *walk(path: string, options: WalkOptions = {}): AsyncIterable<FsEntry> {
    const secret = await this.secretFilter(path, options.authority)
    const skip = options.skip
    yield* walkTree(path, secret ? { ...options, skip: (entry) => secret(entry) || (skip?.(entry) ?? false) } : options)
  }

  async writeFile(path: string, data: string | Uint8Array, options: WriteFileOptions): Promise<WriteResult> {
    const { target, guard } = await this.admit('write', path, options.authority, 'through')
    return writeFileAtomically(target, data, {
      createParents: options.createParents,
      mode: options.mode,
      fsync: this.config.fsync,
      guard,
    })
  }
  async replaceFile(path: string, data: string | Uint8Array, options: ReplaceFileOptions): Promise<WriteResult> {
    const { target, guard } = await this.admit('write', path, options.authority, 'through')
    return writeFileAtomically(target, data, {
      mustExist: true,
      expect: options.expect,
      fsync: this.config.fsync,
      guard,
    })
  }
  async mkdir(path: string, options: MkdirOptions): Promise<MkdirResult> {
    const { target, guard } = await this.admit('create directory', path, options.authority, 'through')
    return makeDirectory(target, { recursive: options.recursive ?? true, guard })
  }
  async remove(path: string, options: RemoveOptions): Promise<void> {
    const { target, guard } = await this.admit('remove', path, options.authority, 'entry')
    return removeEntry(target, { recursive: options.recursive ?? false, guard })
  }
  async rename(from: string, to: string, options: RenameOptions): Promise<void> {
    const source = await this.admit('rename', from, options.authority, 'entry')
    const destination = await this.admit('rename onto', to, options.authority, 'entry')
    // One guard serves both directories: it re-checks against the same authority's roots.
    return renameEntry(source.target, destination.target, {
      overwrite: options.overwrite ?? false,
      guard: source.guard ?? destination.guard,
    })
  }
}
