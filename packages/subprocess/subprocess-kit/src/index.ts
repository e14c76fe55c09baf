// Shared by subprocess-local (pipes and PTY) and bash-kit (persistent sessions) so every capped output
// carries the same cut note (docs/architecture.md "Execution world"). A library: it owns no key.
export { CappedOutput } from './capped-output.ts'
export { FullOutputFile, type FullOutputTarget, type SavedOutput } from './full-output.ts'
