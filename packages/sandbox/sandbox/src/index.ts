export { SANDBOX_MODES, type SandboxMode, type SandboxAuthority, type SandboxNetwork } from './modes.ts'
export type { PathAuthority, PathRule } from './paths.ts'
export {
  Sandbox,
  SandboxError,
  type SandboxErrorCode,
  type Enforcement,
  type SandboxProbe,
  type ConfineOptions,
  type Confinement,
} from './sandbox.ts'
