// Pure helpers the model-facing tools share (docs/architecture.md, "Tools"). A library: no plugin, no key.
export { lineAt, numbered, splitLines } from './lines.ts'
export { refusal, summarizeBash, unconfinedReason, workingDirectory, type BashArgs } from './bash.ts'
export { approvedAuthority, approvedInLog, writeApprovalReason, writeAuthority } from './write-approval.ts'
