// Pure helpers the model-facing tools share (docs/architecture.md, "Tools"). A library: no plugin, no key.
export { terminalText } from './terminal.ts'
export { lineAt, numbered, splitLines } from './lines.ts'
export {
  BASH_GUIDANCE,
  bashArguments,
  refusal,
  summarizeBash,
  unconfinedReason,
  workingDirectory,
  type BashArgs,
  type BashArgumentWords,
} from './bash.ts'
export { approvedAuthority, approvedInLog, writeApprovalReason, writeAuthority } from './write-approval.ts'
export { commandBlocks, fullOutputPath, liveOutput, truncationNote } from './full-output.ts'
export { closestMatch, type ClosestMatch } from './closest.ts'
export { startInBackground } from './background.ts'
export {
  diagnosticsConfig,
  diagnosticsNote,
  diagnosticsOptions,
  formatDiagnostics,
  type DiagnosticsConfig,
  type DiagnosticsNoteOptions,
} from './diagnostics.ts'
