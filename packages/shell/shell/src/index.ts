export {
  Shell,
  ShellError,
  type ShellErrorCode,
  type ShellResult,
  type ShellRunOptions,
  type ShellSession,
  type ShellStartOptions,
  type ShellExit,
  type ShellProcess,
  type ShellSessionOptions,
  type SessionRunOptions,
  type SavedOutput,
} from './shell.ts'
export type { Enforcement } from '@dsh/sandbox'
