import { type Context, Service } from '@dsh/cordis'
import type { SandboxAuthority } from '@dsh/sandbox'
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
} from './types.ts'

declare module '@dsh/cordis' {
  interface Context {
    fs: Fs
  }
}

/**
 * The file system as tools see it. Owns: reading, writing and listing files on behalf of an agent, and
 * (in fenced providers) refusing writes its authority does not cover, before any effect. Must not own: what
 * the model is told, which paths a tool accepts (relative paths are the tool's to resolve), whether a file
 * was read before it is edited (fs-observation-policy), or the authority itself (the sandbox policy).
 *
 * Every path is absolute (FS_INVALID_PATH otherwise). Every failure is an `FsError` with a `code`. Every
 * operation that changes the disk takes `{ authority }`; a read made for the model passes its `{ authority }`
 * too, so a fenced provider refuses secret paths (FS_READ_DENIED) and leaves them out of listings and walks.
 * `stat` and `exists` are not fenced (they tell that a path is there, never what it holds).
 */
export abstract class Fs extends Service {
  constructor(ctx: Context) {
    super(ctx, 'fs')
  }

  /** Metadata of `path` (links followed unless `followSymlinks: false`). FS_NOT_FOUND when absent. */
  abstract stat(path: string, options?: { followSymlinks?: boolean }): Promise<FsStat>
  /** Whether `path` resolves to something (a dangling link does not). */
  abstract exists(path: string): Promise<boolean>
  /**
   * The real path: symlinks of the longest existing ancestor (and of the path itself, even dangling)
   * resolved, the rest appended. The path need not exist.
   */
  abstract realpath(path: string): Promise<string>
  /** Lines of a text file; FS_BINARY for a binary file, FS_TOO_LARGE over the provider's file limit. */
  abstract readText(path: string, options?: ReadTextOptions): Promise<ReadTextResult>
  /** A whole file's bytes (images, attachments); FS_TOO_LARGE over the limit. */
  abstract readBytes(path: string, options?: ReadBytesOptions): Promise<Uint8Array>
  /** Whether a file looks binary (a NUL byte or invalid UTF-8 in its first bytes). */
  abstract isBinary(path: string, options?: ReadOptions): Promise<boolean>
  /** The entries directly inside a directory, sorted by name. */
  abstract list(path: string, options?: ReadOptions): Promise<FsEntry[]>
  /** Every entry under a directory, depth first, each directory's entries sorted by name. */
  abstract walk(path: string, options?: WalkOptions): AsyncIterable<FsEntry>

  /**
   * Throws the FsError a write of `path` under `authority` would be refused with (FS_SANDBOX_DENIED with its
   * `fence` reason, FS_PROTECTED), changing nothing: a tool asks for approval with it before it writes.
   */
  abstract checkWrite(path: string, authority: SandboxAuthority): Promise<void>

  /** Creates or overwrites a file atomically (a temp file in the same directory, then a rename). */
  abstract writeFile(path: string, data: string | Uint8Array, options: WriteFileOptions): Promise<WriteResult>
  /** Replaces an existing file atomically, keeping its mode; FS_NOT_FOUND when absent, FS_CHANGED on `expect` mismatch. */
  abstract replaceFile(path: string, data: string | Uint8Array, options: ReplaceFileOptions): Promise<WriteResult>
  /** Creates a directory (with its parents unless `recursive: false`); an existing directory is fine. */
  abstract mkdir(path: string, options: MkdirOptions): Promise<MkdirResult>
  /** Removes a file, a link (never its target) or a directory (empty unless `recursive`). */
  abstract remove(path: string, options: RemoveOptions): Promise<void>
  /** Moves a file or directory; the destination's parent must exist. */
  abstract rename(from: string, to: string, options: RenameOptions): Promise<void>
}
