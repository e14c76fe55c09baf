// Checkpoints and rewind (docs/architecture.md, "Review and rewind").
export type {
  CheckpointAfter,
  CheckpointBefore,
  CheckpointUncovered,
  FileState,
  RewindDone,
  RewindProblem,
  UnrecordedReason,
} from './events.ts'
export { relativePathProblem } from './events.ts'
export { fileHistories, sameState, stateBefore, turnStarts, uncoveredNotes, type FileHistory } from './fold.ts'
export { RewindError, type RewindOptions, type RewindPreview } from './rewind.ts'
export { BlobStore } from './store.ts'
export { Checkpoints, Checkpoints as default, type Config } from './service.ts'
