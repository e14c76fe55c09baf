export { SANDBOX_MODES, type SandboxMode, type SandboxAuthority } from './modes.ts'
