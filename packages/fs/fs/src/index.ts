// The fs seam (docs/architecture.md "What is mounted today").
export { Fs } from './fs.ts'
export type * from './types.ts'
export { FsError, toFsError, type FenceReason, type FsErrorCode } from './errors.ts'
export { FsIoConfig } from './config.ts'
