export { Subprocess, SubprocessError, type SubprocessErrorCode, type RunOptions, type RunResult, type PtyOptions, type PtyProcess, type PtyExit } from './subprocess.ts'
