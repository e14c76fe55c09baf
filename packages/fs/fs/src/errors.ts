/** Why an fs operation failed. Tools show `message` to the model and may branch on `code`. */
export type FsErrorCode =
  | 'FS_SANDBOX_DENIED' // the authority does not allow this write; nothing was changed
  | 'FS_READ_DENIED' // a secret path: never read for the model
  | 'FS_PROTECTED' // a protected path inside a writable root (.git, agent config): read-only
  | 'FS_NOT_FOUND'
  | 'FS_IS_DIRECTORY' // a file was expected
  | 'FS_NOT_A_DIRECTORY' // a directory was expected (or a path component is a file)
  | 'FS_NOT_A_FILE' // a device, socket or pipe where a regular file was expected
  | 'FS_TOO_LARGE'
  | 'FS_BINARY' // text was asked for and the file is not text
  | 'FS_EXISTS'
  | 'FS_NOT_EMPTY'
  | 'FS_CHANGED' // the file changed since the version the caller expected
  | 'FS_INVALID_PATH' // not absolute, or names nothing removable (`/`, `.`, `..`)
  | 'FS_INVALID_ARGUMENT'
  | 'FS_PERMISSION' // the operating system refused (EACCES, EPERM, EROFS)
  | 'FS_IO' // anything else the operating system reported

/** Which part of the fence refused: the mode, the writable roots, a protected path, or a secret path. */
export type FenceReason = 'mode' | 'outside' | 'protected' | 'secret'

export class FsError extends Error {
  override name = 'FsError'
  /** Set on fence refusals: why, and the rule as written when a path rule refused. */
  fence?: { reason: FenceReason; rule?: string }
  constructor(
    readonly code: FsErrorCode,
    readonly path: string,
    message: string,
    options?: { cause?: unknown; fence?: { reason: FenceReason; rule?: string } },
  ) {
    super(message, options)
    if (options?.fence) this.fence = options.fence
  }
}

const OS_CODES: Record<string, [FsErrorCode, (path: string) => string]> = {
  ENOENT: ['FS_NOT_FOUND', (p) => `"${p}" does not exist`],
  EISDIR: ['FS_IS_DIRECTORY', (p) => `"${p}" is a directory, not a file`],
  ENOTDIR: ['FS_NOT_A_DIRECTORY', (p) => `a component of "${p}" is not a directory`],
  EEXIST: ['FS_EXISTS', (p) => `"${p}" already exists`],
  ENOTEMPTY: ['FS_NOT_EMPTY', (p) => `directory "${p}" is not empty`],
  EACCES: ['FS_PERMISSION', (p) => `the operating system denied access to "${p}"`],
  EPERM: ['FS_PERMISSION', (p) => `the operating system does not permit this operation on "${p}"`],
  EROFS: ['FS_PERMISSION', (p) => `"${p}" is on a read-only file system`],
  ELOOP: ['FS_INVALID_PATH', (p) => `"${p}" has too many levels of symbolic links`],
  ENAMETOOLONG: ['FS_INVALID_PATH', (p) => `"${p}" is too long a name`],
  EXDEV: ['FS_IO', (p) => `"${p}" cannot be moved across file systems`],
}

/** Turns what node:fs threw into an FsError naming the path (an FsError passes through unchanged). */
export function toFsError(error: unknown, path: string): FsError {
  if (error instanceof FsError) return error
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  const known = code ? OS_CODES[code] : undefined
  if (known) return new FsError(known[0], path, known[1](path), { cause: error })
  const detail = error instanceof Error ? error.message : String(error)
  return new FsError('FS_IO', path, `"${path}": ${detail}`, { cause: error })
}
