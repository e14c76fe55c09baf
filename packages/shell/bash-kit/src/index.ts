// The bash driver both bash providers (bash-unconfined, bash-confined) and shell-acp's local fallback extend
// (docs/architecture.md "Execution world"). A library, not a definition: it owns no key, and providers may
// not depend on each other.
export { BashShell, BashConfig } from './bash-shell.ts'
