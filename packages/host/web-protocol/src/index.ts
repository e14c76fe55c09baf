// The web surface's wire contract (docs/architecture.md, "Surfaces"): the JSON API methods (`POST /api/<method>`) and the frames
// of the WebSocket stream, shared by the host plugins and the browser app, so both sides change together.
// The one description is schema.ts (TypeBox, i.e. JSON Schema; also `@dsh/web-protocol/schema`); the types
// here are derived from it with type-only imports, so the browser bundle carries no schema code.
import type { Static } from '@sinclair/typebox'
import type * as S from './schema.ts'

export type WireEvent = Static<typeof S.WireEventSchema>
export type ApiError = Static<typeof S.ApiErrorSchema>
export type ApiResponse<T> = { ok: true; result: T } | { ok: false; error: ApiError }
export type WireRoute = Static<typeof S.WireRouteSchema>
/** An agent's state in the host process; `null` when no agent holds the session here. */
export type AgentState = Static<typeof S.AgentStateSchema>
export type SessionListItem = Static<typeof S.SessionListItemSchema>
export type SearchHit = Static<typeof S.SearchHitSchema>
export type ModelDescription = Static<typeof S.ModelDescriptionSchema>
export type ProviderModels = Static<typeof S.ProviderModelsSchema>
/** How full a session's context is (the token meter's fold over the log). */
export type WirePressure = Static<typeof S.WirePressureSchema>
export type SessionView = Static<typeof S.SessionViewSchema>
export type AgentPresetView = Static<typeof S.AgentPresetViewSchema>
export type PageResult = Static<typeof S.PageResultSchema>
export type SettingView = Static<typeof S.SettingViewSchema>
export type CredentialView = Static<typeof S.CredentialViewSchema>
export type McpServerView = Static<typeof S.McpServerViewSchema>
export type CompositionRow = Static<typeof S.CompositionRowSchema>
export type DirectoryEntry = Static<typeof S.DirectoryEntrySchema>
/** An image as the page sends or shows it: base64 bytes and their media type. */
export type InlineImage = Static<typeof S.InlineImageSchema>
export type WebCommand = Static<typeof S.WebCommandSchema>
export type CommandRunResult = Static<typeof S.CommandRunResultSchema>
/** Summed logged usage and its cost (`usage.session`, a `usage.report` total). */
export type UsageSums = Static<typeof S.UsageSumsSchema>
export type UsageReport = Static<typeof S.UsageReportSchema>
/** What this launch offers the page. */
export type HostInfo = Static<typeof S.HostInfoSchema>
export type FileState = Static<typeof S.FileStateSchema>
export type FileChange = Static<typeof S.FileChangeSchema>
export type SessionChanges = Static<typeof S.SessionChangesSchema>
export type RewindDone = Static<typeof S.RewindDoneSchema>
export type WebApprovalAnswer = (typeof S.WEB_APPROVAL_ANSWERS)[number]
/** The answers an approval takes: once, for the session, always in the workspace, or no (`allow_session` / `allow_always` store the request's `rule`). */
export type ApprovalAnswerValue = WebApprovalAnswer

type Table = typeof S.WEB_METHOD_SCHEMAS
/** Every method of `POST /api/<method>`: its params and its result. */
export type Methods = { [M in keyof Table]: { params: Static<Table[M]['params']>; result: Static<Table[M]['result']> } }
export type MethodName = keyof Methods

/** Browser → host over the WebSocket. */
export type ClientMessage = Static<typeof S.ClientMessageSchema>
/** Host → browser: each WebSocket message is a JSON array of frames (batched per tick). */
export type Frame = Static<typeof S.FrameSchema>

/** The WebSocket subprotocol (the version); the upgrade authenticates with the sign-in cookie like any request. */
export const WS_PROTOCOL = 'dsh.v1'
