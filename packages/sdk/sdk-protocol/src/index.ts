// The SDK wire protocol (docs/architecture.md, "Surfaces"; the spec is this package's README). The schemas
// of schema.ts are the one description; the types here are derived from them (`Static`), and validate.ts
// checks values against them. The runtime side is @dsh/sdk-jsonrpc-server, the TypeScript client @dsh/sdk.
import type { Effort, ModelInfo, Route } from '@dsh/llm'
import type { AnySessionEvent, SessionSummary, TurnEndReason } from '@dsh/session'
import type { SearchHit } from '@dsh/session-query'
import type { Static, TSchema } from '@sinclair/typebox'
import {
  APPROVAL_ANSWERS,
  CLIENT_METHOD_SCHEMAS,
  type ApprovalAnswerSchema,
  type ApprovalRequestParamsSchema,
  type InitializeParamsSchema,
  type InitializeResultSchema,
  type ModelInfoSchema,
  type PromptContentSchema,
  type ProviderInfoSchema,
  type RouteParamSchema,
  type RouteSchema,
  type RpcErrorDataSchema,
  type RpcErrorObjectSchema,
  type SearchHitSchema,
  type SERVER_NOTIFICATION_SCHEMAS,
  type SERVER_REQUEST_SCHEMAS,
  type SessionCancelResultSchema,
  type SessionEventsParamsSchema,
  type SessionEventsResultSchema,
  type SessionForkParamsSchema,
  type SessionListParamsSchema,
  type SessionListResultSchema,
  type SessionSearchParamsSchema,
  type SessionSearchResultSchema,
  type SessionNewParamsSchema,
  type SessionOpenedResultSchema,
  type SessionPromptParamsSchema,
  type SessionPromptResultSchema,
  type SessionRefSchema,
  type SessionResumeParamsSchema,
  type SessionSetModelParamsSchema,
  type SessionSetPermissionParamsSchema,
  type SessionSetPlanModeParamsSchema,
  type SessionCommandParamsSchema,
  type SessionCommandResultSchema,
  type CommandInfoSchema,
  type FileStateSchema,
  type FileChangeSchema,
  type SessionChangesParamsSchema,
  type SessionChangesResultSchema,
  type SessionRewindParamsSchema,
  type SessionRewindResultSchema,
  type SessionUsageResultSchema,
  type SessionViewParamsSchema,
  type SessionViewResultSchema,
  type SessionDeleteResultSchema,
  type SessionRenameParamsSchema,
  type SessionRenameResultSchema,
  type SessionSummarySchema,
  type SESSION_STATUSES,
  type EffortSchema,
  type ToolOutputDataSchema,
  type ClientToolSchema,
  type ToolCallParamsSchema,
  type ToolCallResultSchema,
  type ApprovalResultSchema,
} from './schema.ts'

export type { AnySessionEvent, ModelInfo, Route, SearchHit, SessionSummary, TurnEndReason }
/** A piece of a running call's printed output (`tool/output`, owned by @dsh/tools; protocol.test.ts checks the two agree). */
export type ToolOutputData = Static<typeof ToolOutputDataSchema>
export * from './schema.ts'
export { checkValue, type ValueProblem } from './validate.ts'

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
export type RpcErrorData = Static<typeof RpcErrorDataSchema>
export type RpcErrorObject = Static<typeof RpcErrorObjectSchema>

// The envelope's TypeScript forms are generic over the method and its params; their wire shape is
// RpcRequestSchema, RpcNotificationSchema and RpcResponseSchema.
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

export type RpcResponse<R = unknown> =
  { jsonrpc: '2.0'; id: RpcId; result: R } | { jsonrpc: '2.0'; id: RpcId; error: RpcErrorObject }

export type RpcMessage = RpcRequest | RpcNotification | RpcResponse

/** A route as a parameter: `"provider/model"`, a bare `"model"` (the session's provider), or an object. */
export type RouteParam = Static<typeof RouteParamSchema>
/** What a prompt may carry: plain text or text and image blocks. */
export type PromptContent = Static<typeof PromptContentSchema>
export type InitializeParams = Static<typeof InitializeParamsSchema>
export type ProviderInfo = Static<typeof ProviderInfoSchema>
export type InitializeResult = Static<typeof InitializeResultSchema>
export type SessionNewParams = Static<typeof SessionNewParamsSchema>
export type SessionRef = Static<typeof SessionRefSchema>
export type SessionPromptParams = Static<typeof SessionPromptParamsSchema>
export type SessionPromptResult = Static<typeof SessionPromptResultSchema>
export type SessionCancelResult = Static<typeof SessionCancelResultSchema>
export type SessionOpenedResult = Static<typeof SessionOpenedResultSchema>
export type SessionResumeParams = Static<typeof SessionResumeParamsSchema>
export type SessionForkParams = Static<typeof SessionForkParamsSchema>
export type SessionListParams = Static<typeof SessionListParamsSchema>
export type SessionListResult = Static<typeof SessionListResultSchema>
export type SessionSearchParams = Static<typeof SessionSearchParamsSchema>
export type SessionSearchResult = Static<typeof SessionSearchResultSchema>
export type SessionEventsParams = Static<typeof SessionEventsParamsSchema>
export type SessionEventsResult = Static<typeof SessionEventsResultSchema>
export type SessionSetModelParams = Static<typeof SessionSetModelParamsSchema>
export type SessionSetPermissionParams = Static<typeof SessionSetPermissionParamsSchema>
export type SessionSetPlanModeParams = Static<typeof SessionSetPlanModeParamsSchema>
export type SessionCommandParams = Static<typeof SessionCommandParamsSchema>
export type SessionCommandResult = Static<typeof SessionCommandResultSchema>
export type CommandInfo = Static<typeof CommandInfoSchema>
export type FileState = Static<typeof FileStateSchema>
export type FileChange = Static<typeof FileChangeSchema>
export type SessionChangesParams = Static<typeof SessionChangesParamsSchema>
export type SessionChangesResult = Static<typeof SessionChangesResultSchema>
export type SessionRewindParams = Static<typeof SessionRewindParamsSchema>
export type SessionRewindResult = Static<typeof SessionRewindResultSchema>
export type SessionUsageResult = Static<typeof SessionUsageResultSchema>
export type SessionViewParams = Static<typeof SessionViewParamsSchema>
/** A session's display items (`session/view`); the item types are @dsh/session-view's own (`Item`, `ToolItem`, …). */
export type SessionViewResult = Static<typeof SessionViewResultSchema>
export type SessionDeleteResult = Static<typeof SessionDeleteResultSchema>
export type SessionRenameParams = Static<typeof SessionRenameParamsSchema>
export type SessionRenameResult = Static<typeof SessionRenameResultSchema>
export type SessionStatus = (typeof SESSION_STATUSES)[number]
export type ApprovalRequestParams = Static<typeof ApprovalRequestParamsSchema>
export type ApprovalAnswer = Static<typeof ApprovalAnswerSchema>
export type ApprovalResult = Static<typeof ApprovalResultSchema>
export type ClientTool = Static<typeof ClientToolSchema>
export type ToolCallParams = Static<typeof ToolCallParamsSchema>
export type ToolCallResult = Static<typeof ToolCallResultSchema>

type MethodTable<T extends Record<string, { params: TSchema; result: TSchema }>> = {
  [M in keyof T]: { params: Static<T[M]['params']>; result: Static<T[M]['result']> }
}

/** Requests the client sends, with their params and results. */
export type ClientMethods = MethodTable<typeof CLIENT_METHOD_SCHEMAS>
export type ClientMethod = keyof ClientMethods
export const CLIENT_METHODS = Object.keys(CLIENT_METHOD_SCHEMAS) as readonly ClientMethod[]

/** Notifications the runtime sends. */
export type ServerNotifications = {
  [M in keyof typeof SERVER_NOTIFICATION_SCHEMAS]: Static<(typeof SERVER_NOTIFICATION_SCHEMAS)[M]>
}

/** Requests the runtime sends to the client, with their params and expected results. */
export type ServerRequests = MethodTable<typeof SERVER_REQUEST_SCHEMAS>

export const isApprovalAnswer = (value: unknown): value is ApprovalAnswer =>
  (APPROVAL_ANSWERS as readonly unknown[]).includes(value)

// The wire forms must stay the types the rest of dsh uses for the same values: a drift is a type error here.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const agreement: [
  Same<Static<typeof ModelInfoSchema>, ModelInfo>,
  Same<Static<typeof RouteSchema>, Route>,
  Same<Static<typeof EffortSchema>, Effort>,
  Same<Static<typeof SessionSummarySchema>, SessionSummary>,
  Same<Static<typeof SearchHitSchema>, SearchHit>,
] = [true, true, true, true, true]
void agreement
