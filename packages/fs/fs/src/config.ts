import Schema from '@dsh/schemastery'

/** The limits every local-disk provider applies (its row's `config`). */
export interface FsIoConfig {
  maxTextBytes: number
  maxFileBytes: number
  binarySniffBytes: number
  readChunkBytes: number
  fsync: boolean
}

// Input type Partial: a row (or a test) names only the limits it changes; the rest take their defaults.
export const FsIoConfig: Schema<Partial<FsIoConfig>, FsIoConfig> = Schema.object({
  maxTextBytes: Schema.natural()
    .min(1)
    .default(256 * 1024)
    .description('Most bytes of text one readText returns; longer ranges are cut at a line end and marked truncated.'),
  maxFileBytes: Schema.natural()
    .min(1)
    .default(64 * 1024 * 1024)
    .description('Files larger than this are not read at all (readText and readBytes fail with FS_TOO_LARGE).'),
  binarySniffBytes: Schema.natural()
    .min(1)
    .default(8192)
    .description('Bytes from the start of a file inspected to decide it is binary (a NUL byte or invalid UTF-8).'),
  readChunkBytes: Schema.natural()
    .min(1)
    .default(256 * 1024)
    .description('Size of each read while scanning a file for lines.'),
  fsync: Schema.boolean()
    .default(true)
    .description('Flush each written file (and its directory after the rename) to disk before reporting success.'),
})
