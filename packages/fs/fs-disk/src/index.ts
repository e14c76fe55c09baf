// Local-disk building blocks shared by the fs providers (fs-local, fs-fenced, fs-acp; docs/architecture.md
// "Execution world"). A library, not a definition: it owns no key, and providers may not depend on each other.
export { isInside, requireAbsolute, resolveEntryPath, resolveRealPath } from './local/paths.ts'
export {
  looksBinary,
  pathExists,
  readAllBytes,
  readTextRange,
  sniffBinaryFile,
  statPath,
  type ReadCheck,
} from './local/read.ts'
export { listDirectory, walkTree } from './local/list.ts'
export {
  linkOrCopyOnce,
  makeDirectory,
  removeEntry,
  renameEntry,
  writeFileAtomically,
  type AtomicWriteOptions,
  type DirectoryGuard,
} from './local/write.ts'
export { admit, admitRead, secretEntry, type Admission, type Reach, type WriteKind } from './fence.ts'
export { DiskFs } from './disk.ts'
