import type { SandboxAuthority } from '@dsh/sandbox'

/** What kind of thing a path names. `symlink` only appears where links are not followed. */
export type FsEntryType = 'file' | 'directory' | 'symlink' | 'other'

/**
 * A file's identity at one moment, as `stat` and `readText` report it. `replaceFile({ expect })` refuses
 * to write when the file no longer matches (someone else changed it since it was read).
 */
export interface FsVersion {
  mtimeMs: number
  size: number
}

export interface FsStat {
  /** The path as asked (absolute). */
  path: string
  /** The type of what the path resolves to (of the link itself when `followSymlinks: false`). */
  type: FsEntryType
  /** Whether the path itself is a symbolic link. */
  isSymlink: boolean
  size: number
  mtimeMs: number
  /** Permission bits (`mode & 0o7777`). */
  mode: number
  version: FsVersion
}

/** One entry of a directory listing or a walk. */
export interface FsEntry {
  name: string
  /** Absolute path (under the listed or walked directory, links not resolved). */
  path: string
  /** Path relative to the listed or walked directory, with `/` separators. */
  relativePath: string
  /** The entry's own type: a link is `symlink`, whatever it points to. */
  type: FsEntryType
  /** 0 for the entries directly inside the listed or walked directory. */
  depth: number
}

/**
 * A read on behalf of the model carries the authority it acts under, so a fenced provider refuses a secret
 * path (FS_READ_DENIED) before opening it. Reads dsh makes for itself (instructions, attachments) carry none.
 */
export interface ReadOptions {
  authority?: SandboxAuthority
}

export interface ReadTextOptions extends ReadOptions {
  /** First line to return, 1-based (default 1). */
  startLine?: number
  /** Most lines to return (default: up to the end of the file). */
  maxLines?: number
  /** Most bytes of text to return; the provider's `maxTextBytes` is the ceiling. */
  maxBytes?: number
}

/**
 * A slice of a text file by lines. Lines are split on `\n` and keep their line ends (`\r\n` stays as is),
 * so `text` is exactly the file's bytes from `startLine` to `endLine`, decoded as UTF-8.
 */
export interface ReadTextResult {
  /** The real path read (symlinks resolved). */
  path: string
  text: string
  /** Lines in the whole file (a final `\n` does not start another line; an empty file has 0). */
  totalLines: number
  startLine: number
  /** Last line included in `text`; `startLine - 1` when the range is past the end of the file. */
  endLine: number
  /**
   * The byte cap stopped the read before every requested line was returned. When even the first line did
   * not fit, `text` holds its beginning (cut on a character boundary) and `endLine === startLine`.
   */
  truncated: boolean
  /** Size of the whole file in bytes. */
  bytes: number
  version: FsVersion
}

export interface ReadBytesOptions extends ReadOptions {
  /** Refuse (FS_TOO_LARGE) a file larger than this; the provider's `maxFileBytes` is the ceiling. */
  maxBytes?: number
}

export interface WalkOptions extends ReadOptions {
  /** Deepest level to descend to (0: only the entries of the root). Default: no limit. */
  maxDepth?: number
  /** Descend into symbolic links to directories (each real directory is visited once). Default false. */
  followSymlinks?: boolean
  /** Return true to leave an entry out; a skipped directory is not descended into. */
  skip?: (entry: FsEntry) => boolean
}

/** Every operation that changes the disk says under which authority it acts (docs/security.md). */
export interface WriteOptions {
  authority: SandboxAuthority
}

export interface WriteFileOptions extends WriteOptions {
  /** Create missing parent directories (`mkdir -p`), fenced like the file itself. Default false. */
  createParents?: boolean
  /** Permission bits of a new file (before the umask); an existing file keeps its own. Default 0o666. */
  mode?: number
}

export interface ReplaceFileOptions extends WriteOptions {
  /** Refuse with FS_CHANGED unless the file still has this version (from `stat` or `readText`). */
  expect?: FsVersion
}

export interface MkdirOptions extends WriteOptions {
  /** Create missing parents too (`mkdir -p`); default true. */
  recursive?: boolean
}

export interface RemoveOptions extends WriteOptions {
  /** Remove a directory with everything in it (links inside are removed, never followed). Default false. */
  recursive?: boolean
}

export interface RenameOptions extends WriteOptions {
  /** Replace an existing file at the destination. Default false (FS_EXISTS). */
  overwrite?: boolean
}

export interface WriteResult {
  /** The real path written (a symlink is written through, not replaced). */
  path: string
  bytes: number
  /** The file did not exist before. */
  created: boolean
  version: FsVersion
}

export interface MkdirResult {
  path: string
  /** The directory did not exist before. */
  created: boolean
}
