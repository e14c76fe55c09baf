// The SDK wire protocol (docs/architecture.md, "Surfaces"; the spec is this package's README). Types and
// constants only: the runtime side is @dsh/sdk-jsonrpc-server, the TypeScript client is @dsh/sdk.
import type { Effort, ImageBlock, ModelInfo, Route, TextBlock } from '@dsh/llm'
import type { AnySessionEvent, SessionSummary, TurnEndReason } from '@dsh/session'

export type { AnySessionEvent, ModelInfo, Route, SessionSummary, TurnEndReason }

/** Bumped on any incompatible change of a method, a notification or an error code. */
export const PROTOCOL_VERSION = 1

/** JSON-RPC 2.0 error codes, the standard ones and the server-defined ones of this protocol. */
export const RPC_ERRORS = {
  /** The line is not JSON. `data.lineStart` quotes its beginning. */
  PARSE_ERROR: -32700,
  /** JSON, but not a JSON-RPC 2.0 request, notification or response (also: a line over the size limit). */
  INVALID_REQUEST: -32600,
  /** No such method. `data.method` names it. */
  METHOD_NOT_FOUND: -32601,
  /** A parameter is missing or of the wrong shape. `data.field` names it (`route.provider`, `content[2].text`). */
  INVALID_PARAMS: -32602,
  /** A bug in the runtime: the message says what failed, the runtime keeps serving. */
  INTERNAL_ERROR: -32603,
  /** The operation was refused for a reason the runtime names: `data.code` is the typed code (`SESSION_NOT_FOUND`, `SESSION_LOCKED`, `FORK_INSIDE_TURN`, …). */
  REQUEST_FAILED: -32000,
  /** A method other than `initialize` or `shutdown` arrived before `initialize`. */
  NOT_INITIALIZED: -32002,
  /** The runtime is shutting down (after `shutdown` or EOF) and takes no new work. */
  SHUTTING_DOWN: -32003,
} as const

export type RpcErrorCode = (typeof RPC_ERRORS)[keyof typeof RPC_ERRORS]

export type RpcId = string | number | null

export interface RpcErrorData {
  /** Typed code of the failure (`SESSION_NOT_FOUND`, `LINE_TOO_LONG`, …). */
  code?: string
  /** The parameter that was wrong (INVALID_PARAMS). */
  field?: string
  /** The beginning of the offending line (PARSE_ERROR, INVALID_REQUEST for an oversized line). */
  lineStart?: string
  /** The unknown method (METHOD_NOT_FOUND). */
  method?: string
}

export interface RpcErrorObject {
  code: number
  message: string
  data?: RpcErrorData
}

export interface RpcRequest<M extends string = string, P = unknown> {
  jsonrpc: '2.0'
  id: RpcId
  method: M
  params?: P
}

export interface RpcNotification<M extends string = string, P = unknown> {
  jsonrpc: '2.0'
  method: M
  params?: P
}

export type RpcResponse<R = unknown> = { jsonrpc: '2.0'; id: RpcId; result: R } | { jsonrpc: '2.0'; id: RpcId; error: RpcErrorObject }

export type RpcMessage = RpcRequest | RpcNotification | RpcResponse

/** A route as a parameter: `"provider/model"`, a bare `"model"` (the session's provider), or an object. */
export type RouteParam = string | { provider: string; model: string; effort?: Effort }

/** What a prompt may carry: plain text or text and image blocks. */
export type PromptContent = string | (TextBlock | ImageBlock)[]

export interface InitializeParams {
  /** The protocol version the client speaks (this package's `PROTOCOL_VERSION`). */
  protocolVersion: number
  clientInfo?: { name: string; version?: string }
  capabilities?: {
    /** The client answers `approval/request`. Without it every approval is refused. */
    approvals?: boolean
  }
}

export interface ProviderInfo {
  provider: string
  models: ModelInfo[]
  /** Set when the provider could not list its models (the provider is still usable by route). */
  error?: string
}

export interface InitializeResult {
  /** The version the runtime speaks; a client that cannot speak it should close. */
  protocolVersion: number
  serverInfo: { name: 'dsh'; version: string; profile: string }
  capabilities: {
    /** Whether approvals will be sent to this client as `approval/request` (it declared the capability). */
    approvals: boolean
    /** Whether `session/setPermission` and `session/new { permission }` are available (a presets row is mounted). */
    permissionPresets: boolean
  }
  /** Mounted model providers and the models each knows. */
  providers: ProviderInfo[]
  /** The runtime's working directory: the default `cwd` of new sessions. */
  cwd: string
}

export interface SessionNewParams {
  /** Absolute path of an existing directory (default: the runtime's cwd). */
  cwd?: string
  route?: RouteParam
  /** A permission preset name (`read-only`, `workspace-write`, `danger-full-access`). */
  permission?: string
  /** A whole system prompt for this session instead of the assembled one. */
  systemPrompt?: string
}

export interface SessionRef {
  sessionId: string
}

export interface SessionPromptParams {
  /** An open or stored session; an unknown id (or none) starts a new session, whose id the result gives. */
  sessionId?: string
  content: PromptContent
}

export interface SessionPromptResult {
  sessionId: string
  /** The receipt of the queued message. */
  messageId: string
}

export interface SessionCancelResult {
  /** Whether a turn was running and was asked to stop. */
  wasRunning: boolean
}

export interface SessionOpenedResult {
  sessionId: string
  /** Events in the log now (page them with `session/events`). */
  length: number
}

export interface SessionResumeParams extends SessionRef {
  route?: RouteParam
}

export interface SessionForkParams extends SessionRef {
  /** The last event the fork keeps; it must not lie inside an open turn. */
  atSeq: number
  route?: RouteParam
}

export interface SessionListParams {
  /** Only sessions started in this directory. */
  cwd?: string
}

export interface SessionListResult {
  sessions: SessionSummary[]
}

export interface SessionEventsParams extends SessionRef {
  /** First seq of the page (default 0). */
  fromSeq?: number
  /** Events per page (default and maximum: the runtime's `pageSize` and `maxPageSize`). */
  limit?: number
}

export interface SessionEventsResult {
  events: AnySessionEvent[]
  /** The seq of the next page, or null when this page reached the end of the log. */
  nextSeq: number | null
  /** Events in the log. */
  length: number
}

export interface SessionSetModelParams extends SessionRef {
  route: RouteParam
}

export interface SessionSetPermissionParams extends SessionRef {
  preset: string
}

/** Requests the client sends, with their params and results. */
export interface ClientMethods {
  initialize: { params: InitializeParams; result: InitializeResult }
  'session/new': { params: SessionNewParams; result: SessionOpenedResult }
  'session/prompt': { params: SessionPromptParams; result: SessionPromptResult }
  'session/cancel': { params: SessionRef; result: SessionCancelResult }
  'session/resume': { params: SessionResumeParams; result: SessionOpenedResult }
  'session/fork': { params: SessionForkParams; result: SessionOpenedResult }
  'session/list': { params: SessionListParams; result: SessionListResult }
  'session/events': { params: SessionEventsParams; result: SessionEventsResult }
  'session/setModel': { params: SessionSetModelParams; result: { route: Route } }
  'session/setPermission': { params: SessionSetPermissionParams; result: { preset: string } }
  shutdown: { params: Record<string, never>; result: Record<string, never> }
}

export type ClientMethod = keyof ClientMethods

export const CLIENT_METHODS: readonly ClientMethod[] = [
  'initialize',
  'session/new',
  'session/prompt',
  'session/cancel',
  'session/resume',
  'session/fork',
  'session/list',
  'session/events',
  'session/setModel',
  'session/setPermission',
  'shutdown',
]

export type SessionStatus = 'running' | 'idle'

/** Notifications the runtime sends. */
export interface ServerNotifications {
  /** Every event committed to the log of a session of this runtime, in log order. */
  'session.event': { sessionId: string; event: AnySessionEvent }
  /** A session's agent started working (`running`) or finished everything queued (`idle`). */
  'session.status': { sessionId: string; status: SessionStatus }
}

export interface ApprovalRequestParams {
  requestId: string
  sessionId: string
  callId?: string
  tool: string
  /** A short human summary of the call's arguments (`bash: rm -rf build`). */
  summary: string
  /** Why approval is needed. */
  reason: string
  /** The grant rule `allow_session` / `allow_always` would keep (`bash(npm test *)`); absent: only `allow_once` or `reject`. */
  rule?: string
}

/** Once; for the rest of the session (keeps `rule`); always in this workspace (keeps `rule` in grants.yaml); or no. */
export const APPROVAL_ANSWERS = ['allow_once', 'allow_session', 'allow_always', 'reject'] as const
export type ApprovalAnswer = (typeof APPROVAL_ANSWERS)[number]

/** Requests the runtime sends to the client, with their params and expected results. */
export interface ServerRequests {
  'approval/request': { params: ApprovalRequestParams; result: { answer: ApprovalAnswer } }
}
