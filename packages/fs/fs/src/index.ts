// The fs seam (DESIGN §4, §8; docs/architecture.md "What is mounted today").
export { Fs } from './fs.ts'
export type * from './types.ts'
export { FsError, toFsError, type FenceReason, type FsErrorCode } from './errors.ts'
export { FsIoConfig } from './config.ts'

// Local-disk building blocks shared by the providers (fs-local, fs-sandbox, fs-acp). Stateless; they own no key.
export { isInside, requireAbsolute, resolveEntryPath, resolveRealPath } from './local/paths.ts'
export { looksBinary, pathExists, readAllBytes, readTextRange, sniffBinaryFile, statPath, type ReadCheck } from './local/read.ts'
export { listDirectory, walkTree } from './local/list.ts'
export { makeDirectory, removeEntry, renameEntry, writeFileAtomically, type AtomicWriteOptions, type DirectoryGuard } from './local/write.ts'
export { admit, admitRead, secretEntry, type Admission, type Reach, type WriteKind } from './fence.ts'
export { DiskFs } from './disk.ts'
