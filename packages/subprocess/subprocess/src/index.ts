export {
  Subprocess,
  SubprocessError,
  type SubprocessErrorCode,
  type RunOptions,
  type RunResult,
  type PtyOptions,
  type PtyProcess,
  type PtyExit,
  type FullOutputTarget,
  type SavedOutput,
} from './subprocess.ts'
