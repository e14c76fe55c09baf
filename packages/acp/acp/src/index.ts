// dsh as an Agent Client Protocol agent (docs/architecture.md, "Surfaces").
export { Acp, Acp as default, type Config, type ToolScope } from './service.ts'
export { AcpError, type AcpErrorCode } from './errors.ts'
export { stopReasonOf } from './acp-session.ts'
// The client-side types providers that route through the editor need (fs-acp, shell-acp).
export type {
  ClientCapabilities,
  CreateTerminalRequest,
  TerminalHandle,
  TerminalOutputResponse,
  WaitForTerminalExitResponse,
} from '@agentclientprotocol/sdk'
