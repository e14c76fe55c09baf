// The web surface's wire contract (DESIGN §10): the JSON API methods (`POST /api/<method>`) and the frames
// of the WebSocket stream. Types only, shared by the host plugins and the browser app, so both sides
// change together. Nothing here may import Node or browser APIs.

/** The answers an approval takes (as `@dsh/approval` defines them): once, for the session, always in the workspace, or no. */
export type ApprovalAnswerValue = 'allow_once' | 'allow_session' | 'allow_always' | 'reject'

/** A session event as it travels: the log's `{ type, seq, time, data }`, data left open (kinds grow). */
export interface WireEvent {
  type: string
  seq: number
  time: number
  data: any
  ignorable?: true
}

export interface ApiError {
  code: string
  message: string
}

export type ApiResponse<T> = { ok: true; result: T } | { ok: false; error: ApiError }

export interface WireRoute {
  provider: string
  model: string
  effort?: string
}

/** An agent's state in the host process; `null` when no agent holds the session here. */
export type AgentState = 'idle' | 'running' | null

export interface SessionListItem {
  id: string
  cwd: string
  createdAt: number
  updatedAt: number
  events: number
  turns: number
  title?: string
  firstPrompt?: string
  /** `open` when the last turn never ended. */
  status: 'idle' | 'open'
  /** Another process holds the writer lease. */
  lockedElsewhere: boolean
  agent: AgentState
  pendingApprovals: number
  parent?: { id: string; atSeq: number }
}

export interface SearchHit {
  sessionId: string
  /** Where the text matched: the title or first prompt, or a message. */
  field: 'title' | 'text'
  /** A short excerpt around the match. */
  snippet: string
  seq?: number
}

export interface ModelDescription {
  id: string
  contextWindow: number
  maxOutputTokens?: number
  images: boolean
  reasoning: boolean
  efforts?: string[]
}

export interface ProviderModels {
  provider: string
  models: ModelDescription[]
  /** Why the catalogue could not be listed (the picker still offers the provider). */
  error?: string
  /**
   * Whether a request could be sent now: the adapter's `ready()` (a key is set), true when it cannot tell.
   * Says nothing about whether the provider accepts the key.
   */
  ready: boolean
  /** Why it is not ready, in the adapter's words (names the missing variable and how to set it, never a value). */
  notReady?: ApiError
}

/** How full a session's context is (the token meter's fold over the log). */
export interface WirePressure {
  tokens: number
  window: number
  ratio: number
  source: 'usage' | 'estimate'
}

export interface SessionView {
  id: string
  cwd: string
  createdAt: number
  parent?: { id: string; atSeq: number }
  /** Number of events in the log now; live events follow from this seq. */
  length: number
  agent: AgentState
  route: WireRoute
  /** The permission preset in force, when the presets plugin is mounted. */
  preset?: string
  /** Approval requests waiting for an answer (any tab may answer; the first answer wins). */
  pendingApprovals: string[]
  lockedElsewhere: boolean
  title?: string
  /** Present when the token meter is mounted and the session runs here. */
  pressure?: WirePressure
}

export interface PageResult {
  /** Events with `start <= seq < end`, without superseded stream chunks and bulky request headers. */
  events: WireEvent[]
  start: number
  end: number
}

export interface SettingView {
  key: string
  value: unknown
  default: unknown
  description: string
  source: string
  origin?: string
}

export interface CredentialView {
  /** The provider that reads it, when known. */
  provider?: string
  name: string
  set: boolean
  source: 'env' | 'home-file' | 'dotenv' | 'missing'
  location?: string
  /** Where the user can set it (names places, never values). */
  howToSet: string
}

export interface CompositionRow {
  id: string
  name?: string
  disabled?: unknown
  config?: unknown
  /** The layers that touched the row, as the dump's comment says (`bundle @dsh/bundle-base:12 (name)`). */
  setBy: string[]
  children?: CompositionRow[]
}

export interface DirectoryEntry {
  name: string
  path: string
  isDirectory: boolean
}

/** An image as the page sends or shows it: base64 bytes and their media type. */
export interface InlineImage {
  mediaType: string
  data: string
}

/** What this launch offers the page. */
export interface HostInfo {
  version: string
  profile: string
  /** Images can be attached (an attachments plugin is mounted). */
  attachments: boolean
}

/** Every method of `POST /api/<method>`: its params and its result. */
export interface Methods {
  'sessions.list': { params: {}; result: { sessions: SessionListItem[]; launchCwd: string } }
  'sessions.search': { params: { query: string }; result: { hits: SearchHit[] } }
  'sessions.open': { params: { sessionId: string }; result: SessionView }
  'sessions.page': { params: { sessionId: string; before?: number; limit?: number }; result: PageResult }
  'sessions.create': { params: { cwd: string; route?: WireRoute; preset?: string }; result: { sessionId: string } }
  'sessions.fork': { params: { sessionId: string; atSeq: number }; result: { sessionId: string } }
  'agent.send': { params: { sessionId: string; text: string; mode?: 'followup' | 'steer'; images?: InlineImage[] }; result: { messageId: string } }
  'agent.cancel': { params: { sessionId: string }; result: { cancelled: boolean } }
  'agent.setRoute': { params: { sessionId: string; route: WireRoute }; result: { route: WireRoute } }
  'agent.setPreset': { params: { sessionId: string; preset: string }; result: { preset: string } }
  'attachments.get': { params: { sessionId: string; sha256: string }; result: InlineImage }
  'host.info': { params: {}; result: HostInfo }
  /** `allow_session` / `allow_always` store the request's `rule` as a grant; a request without one takes only `allow_once` or `reject`. */
  'approvals.answer': { params: { requestId: string; answer: ApprovalAnswerValue }; result: { answered: true } }
  'models.list': { params: {}; result: { providers: ProviderModels[]; defaultRoute: WireRoute } }
  'presets.list': { params: {}; result: { presets: string[]; defaultPreset?: string } }
  'settings.list': { params: {}; result: { settings: SettingView[] } }
  'settings.set': { params: { key: string; value: unknown }; result: { setting: SettingView } }
  'settings.reset': { params: { key: string }; result: { setting: SettingView } }
  'credentials.list': { params: {}; result: { credentials: CredentialView[] } }
  'credentials.set': { params: { name: string; value: string }; result: { credential: CredentialView } }
  'credentials.remove': { params: { name: string }; result: { credential: CredentialView } }
  'composition.get': { params: {}; result: { text: string; header: string[]; rows: CompositionRow[] } }
  'files.list': { params: { path?: string }; result: { path: string; root: string; parent?: string; entries: DirectoryEntry[] } }
}

export type MethodName = keyof Methods

/** Browser → host over the WebSocket. */
export type ClientMessage = { op: 'sub'; ch: string; key: string; params?: unknown } | { op: 'unsub'; ch: string; key: string }

/** Host → browser: each WebSocket message is a JSON array of frames (batched per tick). */
export type Frame =
  | { ch: 'session'; key: string; type: 'event'; event: WireEvent }
  /** The gap since the client's `since` is too long to replay: reload the view by pages. */
  | { ch: 'session'; key: string; type: 'reset'; length: number }
  | { ch: 'session'; key: string; type: 'pressure'; pressure: WirePressure }
  | { ch: 'sessions'; key: '*'; type: 'changed'; sessionId: string }
  | { ch: 'sessions'; key: '*'; type: 'agent'; sessionId: string; agent: AgentState }
  | { ch: 'sessions'; key: '*'; type: 'approvals'; sessionId: string; pending: number }
  | { ch: 'error'; key: string; message: string }

/** The WebSocket subprotocols: the version, and the per-launch token (browsers cannot set headers). */
export const WS_PROTOCOL = 'dsh.v1'
export const WS_TOKEN_PREFIX = 'dsh.token.'
