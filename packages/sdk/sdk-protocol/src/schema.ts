// The SDK protocol, declared once (docs/architecture.md, "Surfaces"; the spec is this package's README).
// TypeBox schemas are JSON Schema: the TypeScript types are `Static<…>` of them (index.ts), the runtime
// validates every incoming params object against them (validate.ts), and `npm run generate:protocol`
// writes them out as protocol.schema.json and Python TypedDicts (python/sdk/dsh/protocol.py), checked by
// scripts/gates/protocol-generated.mjs. Every named schema has a `title`: the generators name types by it.
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import type { AnySessionEvent } from '@dsh/session'
import { ItemSchema, TodoEntrySchema } from '@dsh/session-view'

/** A string that is one of `values` (a plain JSON Schema `enum`, typed as the union of the values). */
export const stringEnum = <const T extends readonly string[]>(
  values: T,
  options: { title?: string; description?: string } = {},
) => Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options })

const closed = { additionalProperties: false } as const

export const EFFORT_VALUES = ['off', 'low', 'high', 'max'] as const
/** The answers a client may give to `approval/request`: once; for the rest of the session (keeps `rule`); always in this workspace (keeps `rule` in grants.yaml); or no. */
export const APPROVAL_ANSWERS = ['allow_once', 'allow_session', 'allow_always', 'reject'] as const
export const SESSION_STATUSES = ['running', 'idle'] as const

// ── The JSON-RPC envelope ──────────────────────────────────────────────────────────────────────────────

export const RpcIdSchema = Type.Union([Type.String(), Type.Number(), Type.Null()], { title: 'RpcId' })

export const RpcErrorDataSchema = Type.Object(
  {
    code: Type.Optional(
      Type.String({ description: 'Typed code of the failure (`SESSION_NOT_FOUND`, `LINE_TOO_LONG`, …).' }),
    ),
    field: Type.Optional(Type.String({ description: 'The parameter that was wrong (INVALID_PARAMS, some refusals).' })),
    lineStart: Type.Optional(
      Type.String({ description: 'The beginning of the offending line (PARSE_ERROR, LINE_TOO_LONG).' }),
    ),
    method: Type.Optional(Type.String({ description: 'The unknown method (METHOD_NOT_FOUND).' })),
  },
  { title: 'RpcErrorData' },
)

export const RpcErrorObjectSchema = Type.Object(
  { code: Type.Integer(), message: Type.String(), data: Type.Optional(RpcErrorDataSchema) },
  { title: 'RpcErrorObject' },
)

export const RpcRequestSchema = Type.Object(
  {
    jsonrpc: Type.Literal('2.0'),
    id: RpcIdSchema,
    method: Type.String(),
    params: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { title: 'RpcRequest', description: 'A request: exactly one response follows, with the same id.' },
)

export const RpcNotificationSchema = Type.Object(
  {
    jsonrpc: Type.Literal('2.0'),
    method: Type.String(),
    params: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { title: 'RpcNotification', description: 'A message without id: nobody answers it.' },
)

export const RpcResponseSchema = Type.Union(
  [
    Type.Object({ jsonrpc: Type.Literal('2.0'), id: RpcIdSchema, result: Type.Unknown() }, { title: 'RpcResult' }),
    Type.Object(
      { jsonrpc: Type.Literal('2.0'), id: RpcIdSchema, error: RpcErrorObjectSchema },
      { title: 'RpcFailure' },
    ),
  ],
  { title: 'RpcResponse' },
)

// ── Shared values ──────────────────────────────────────────────────────────────────────────────────────

export const EffortSchema = stringEnum(EFFORT_VALUES, { title: 'Effort' })

export const RouteSchema = Type.Object(
  { provider: Type.String(), model: Type.String(), effort: Type.Optional(EffortSchema) },
  { title: 'Route', ...closed },
)

export const RouteParamSchema = Type.Union(
  [
    Type.String({ minLength: 1, description: '"provider/model" or a bare "model" (the session\'s provider).' }),
    Type.Object(
      {
        provider: Type.String({ minLength: 1 }),
        model: Type.String({ minLength: 1 }),
        effort: Type.Optional(EffortSchema),
      },
      { title: 'RouteObject', ...closed },
    ),
  ],
  {
    title: 'RouteParam',
  },
)

export const TextContentSchema = Type.Object(
  { type: Type.Literal('text'), text: Type.String() },
  { title: 'TextContent', ...closed },
)

export const ImageContentSchema = Type.Object(
  {
    type: Type.Literal('image'),
    mediaType: Type.String({ pattern: '^image/', description: 'An image media type such as "image/png".' }),
    data: Type.String({ minLength: 1, description: 'The image as base64.' }),
  },
  { title: 'ImageContent', ...closed },
)

export const PromptContentSchema = Type.Union(
  [Type.String({ minLength: 1 }), Type.Array(Type.Union([TextContentSchema, ImageContentSchema]), { minItems: 1 })],
  { title: 'PromptContent' },
)

export const ModelInfoSchema = Type.Object(
  {
    id: Type.String(),
    contextWindow: Type.Integer(),
    maxOutputTokens: Type.Optional(Type.Integer()),
    images: Type.Boolean(),
    reasoning: Type.Boolean(),
    efforts: Type.Optional(Type.Array(EffortSchema)),
  },
  { title: 'ModelInfo' },
)

export const ProviderInfoSchema = Type.Object(
  {
    provider: Type.String(),
    models: Type.Array(ModelInfoSchema),
    error: Type.Optional(
      Type.String({ description: 'Set when the provider could not list its models (it is still usable by route).' }),
    ),
  },
  { title: 'ProviderInfo' },
)

export const SessionSummarySchema = Type.Object(
  {
    id: Type.String(),
    cwd: Type.String(),
    createdAt: Type.Integer(),
    updatedAt: Type.Integer(),
    events: Type.Integer(),
    turns: Type.Integer(),
    firstPrompt: Type.Optional(
      Type.String({
        description: 'The first user prompt, mention markup removed, shortened: the title until one is logged.',
      }),
    ),
    title: Type.Optional(Type.String()),
    titleSource: Type.Optional(
      stringEnum(['user', 'model'] as const, {
        description: 'Who named the session; a user title is never replaced by a generated one.',
      }),
    ),
    archived: Type.Optional(Type.Boolean({ description: 'Archived (`session/archived`): hidden from default lists.' })),
    damaged: Type.Optional(
      Type.String({
        description: 'Why the stored log cannot be opened (file, line, field); the session cannot be resumed.',
      }),
    ),
    status: stringEnum(['idle', 'open'] as const, {
      description: '`open` when the last turn never ended (a crash or a live writer).',
    }),
    live: Type.Boolean({ description: 'Whether another process holds the writer lease right now.' }),
    parent: Type.Optional(Type.Object({ id: Type.String(), atSeq: Type.Integer() })),
    subagentOf: Type.Optional(
      Type.Object(
        { id: Type.String(), description: Type.String() },
        {
          description:
            "A subagent's child session (`subagent/parent`): the session that started it and the task's description.",
        },
      ),
    ),
  },
  { title: 'SessionSummary' },
)

/**
 * A committed session event. Only the envelope is fixed here: each kind's `data` is declared by the plugin
 * that owns it, so TypeScript gets the log's own union (`AnySessionEvent`) over the same JSON.
 */
export const SessionEventSchema = Type.Unsafe<AnySessionEvent>(
  Type.Object(
    {
      type: Type.String({ description: 'The kind (`turn/start`, `assistant/chunk`, `tool/result`, …).' }),
      seq: Type.Integer({ minimum: 0, description: 'Its index in the log.' }),
      time: Type.Integer({ description: 'Epoch milliseconds.' }),
      data: Type.Unknown({ description: 'Plain JSON, shaped by the kind.' }),
      ignorable: Type.Optional(Type.Literal(true)),
    },
    { title: 'SessionEvent' },
  ),
)

/**
 * The `data` of event kinds a client reads while they happen, by kind (the rest are in the log's own types):
 * `tool/output` is a piece of a running call's printed output (owned by @dsh/tools), never seen by the model.
 */
export const ToolOutputDataSchema = Type.Object(
  {
    callId: Type.String({ minLength: 1 }),
    index: Type.Integer({ minimum: 0, description: "The piece's place among its call's pieces (0, 1, …)." }),
    text: Type.String({ description: 'What a terminal shows: CRLF as LF, no escape sequences; credentials redacted.' }),
    raw: Type.Optional(Type.String({ description: 'The bytes as printed (colours), when they differ from `text`.' })),
    capped: Type.Optional(
      Type.Literal(true, {
        description: 'The last piece logged for the call: it reached the live-output cap (the result holds the rest).',
      }),
    ),
  },
  { title: 'ToolOutputData', ...closed },
)

export const EVENT_DATA_SCHEMAS = {
  'tool/output': ToolOutputDataSchema,
} satisfies Record<string, TSchema>

const SessionId = Type.String({ minLength: 1 })

// ── Methods (client → runtime) ─────────────────────────────────────────────────────────────────────────

export const InitializeParamsSchema = Type.Object(
  {
    protocolVersion: Type.Integer({ minimum: 1, description: 'The protocol version the client speaks.' }),
    clientInfo: Type.Optional(
      Type.Object(
        { name: Type.String({ minLength: 1 }), version: Type.Optional(Type.String()) },
        { title: 'ClientInfo', ...closed },
      ),
    ),
    capabilities: Type.Optional(
      Type.Object(
        {
          approvals: Type.Optional(
            Type.Boolean({
              description: 'The client answers `approval/request`. Without it every approval is refused.',
            }),
          ),
        },
        { title: 'ClientCapabilities', ...closed },
      ),
    ),
  },
  { title: 'InitializeParams', ...closed },
)

export const InitializeResultSchema = Type.Object(
  {
    protocolVersion: Type.Integer({
      description: 'The version the runtime speaks; a client that cannot speak it should close.',
    }),
    serverInfo: Type.Object(
      { name: Type.Literal('dsh'), version: Type.String(), profile: Type.String() },
      { title: 'ServerInfo' },
    ),
    capabilities: Type.Object(
      {
        approvals: Type.Boolean({
          description: 'Whether approvals will be sent to this client as `approval/request`.',
        }),
        permissionPresets: Type.Boolean({
          description: 'Whether `session/setPermission` and `session/new { permission }` are available.',
        }),
      },
      { title: 'ServerCapabilities' },
    ),
    providers: Type.Array(ProviderInfoSchema, { description: 'Mounted model providers and the models each knows.' }),
    cwd: Type.String({ description: "The runtime's working directory: the default `cwd` of new sessions." }),
    limits: Type.Object(
      {
        maxLineBytes: Type.Integer({
          minimum: 1,
          description:
            'The longest message (one line, in bytes) the runtime reads; a client refuses a longer request itself, since the runtime cannot tell which request a dropped line was.',
        }),
      },
      { title: 'ServerLimits' },
    ),
  },
  { title: 'InitializeResult' },
)

const McpTrustSchema = Type.Union([Type.Literal('ask'), Type.Literal('allow')], {
  description: '`ask` (default): every call of its tools is an approval request; `allow`: none.',
})

export const McpStdioServerParamSchema = Type.Object(
  {
    type: Type.Optional(Type.Literal('stdio')),
    command: Type.String({ minLength: 1 }),
    args: Type.Optional(Type.Array(Type.String())),
    env: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        description:
          "Variables the server gets on top of the scrubbed environment; `${VAR}` is expanded from the runtime's environment.",
      }),
    ),
    trust: Type.Optional(McpTrustSchema),
    sandbox: Type.Optional(Type.Boolean({ description: 'false: run outside the sandbox in confined modes.' })),
  },
  { title: 'McpStdioServerParam', ...closed },
)

const ToolNameList = (description: string) =>
  Type.Array(Type.String({ minLength: 1 }), { uniqueItems: true, description })

export const ToolFilterFields = {
  allowedTools: Type.Optional(
    ToolNameList(
      "Only these tools are offered to the model and may run (a logged `sdk/tool-filter`; the request's tool list changes).",
    ),
  ),
  disallowedTools: Type.Optional(
    ToolNameList('These tools are neither offered nor run (applied after `allowedTools`).'),
  ),
}

export const ClientToolSchema = Type.Object(
  {
    name: Type.String({
      pattern: '^[A-Za-z][A-Za-z0-9_-]{0,63}$',
      description: 'Unique in the session: a name a built-in, plugin or MCP tool already has is refused.',
    }),
    description: Type.String({ minLength: 1, description: 'What the model reads about the tool.' }),
    parameters: Type.Record(Type.String(), Type.Unknown(), {
      description:
        'JSON Schema of the arguments (`type: "object"`); calls are validated against it before they reach the client.',
    }),
    approval: Type.Optional(
      Type.Boolean({ description: 'true: every call is an approval request first (answered like any other).' }),
    ),
  },
  { title: 'ClientTool', ...closed },
)

export const SessionNewParamsSchema = Type.Object(
  {
    cwd: Type.Optional(
      Type.String({
        minLength: 1,
        description: "Absolute path of an existing directory (default: the runtime's cwd).",
      }),
    ),
    route: Type.Optional(RouteParamSchema),
    permission: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'A permission preset name (`read-only`, `workspace-write`, `danger-full-access`).',
      }),
    ),
    agentPreset: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'An agent preset name (`standard`, `explore`, `minimal`, or a `$DSH_HOME/presets/<name>.yaml`): the tools the session is offered. Not a permission preset.',
      }),
    ),
    planMode: Type.Optional(
      Type.Boolean({
        description: 'true: the session starts in plan mode (only reading runs until the plan is approved).',
      }),
    ),
    systemPrompt: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'A whole system prompt for this session instead of the assembled one.',
      }),
    ),
    mcpServers: Type.Optional(
      Type.Record(Type.String({ pattern: '^(?!.*__)[A-Za-z0-9_-]{1,48}$' }), McpStdioServerParamSchema, {
        description:
          'MCP servers for this session, by name (stdio; added to $DSH_HOME/mcp.yaml and the workspace .mcp.json, replacing a same name). Their tools are `mcp__<name>__<tool>`.',
      }),
    ),
    tools: Type.Optional(
      Type.Array(ClientToolSchema, {
        description:
          'Tools the client implements: each call of the model is sent back as `tool/call` (a logged `sdk/client-tools`; the tools live as long as this runtime holds the session).',
      }),
    ),
    ...ToolFilterFields,
  },
  { title: 'SessionNewParams', ...closed },
)

export const SessionRefSchema = Type.Object({ sessionId: SessionId }, { title: 'SessionRef', ...closed })

export const SessionPromptParamsSchema = Type.Object(
  {
    sessionId: Type.Optional(
      Type.String({
        minLength: 1,
        description: 'An open or stored session; an unknown id (or none) starts a new session.',
      }),
    ),
    content: PromptContentSchema,
    maxSteps: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: "Steps (model requests) this prompt's turn may take, in place of the `agent.maxSteps` setting.",
      }),
    ),
    ...ToolFilterFields,
  },
  { title: 'SessionPromptParams', ...closed },
)

export const SessionPromptResultSchema = Type.Object(
  { sessionId: Type.String(), messageId: Type.String({ description: 'The receipt of the queued message.' }) },
  { title: 'SessionPromptResult' },
)

export const SessionCancelResultSchema = Type.Object(
  { wasRunning: Type.Boolean({ description: 'Whether a turn was running and was asked to stop.' }) },
  { title: 'SessionCancelResult' },
)

export const SessionOpenedResultSchema = Type.Object(
  {
    sessionId: Type.String(),
    length: Type.Integer({ description: 'Events in the log now (page them with `session/events`).' }),
  },
  { title: 'SessionOpenedResult' },
)

export const SessionResumeParamsSchema = Type.Object(
  { sessionId: SessionId, route: Type.Optional(RouteParamSchema) },
  { title: 'SessionResumeParams', ...closed },
)

export const SessionForkParamsSchema = Type.Object(
  {
    sessionId: SessionId,
    atSeq: Type.Integer({
      minimum: 0,
      description: 'The last event the fork keeps; it must not lie inside an open turn.',
    }),
    route: Type.Optional(RouteParamSchema),
  },
  { title: 'SessionForkParams', ...closed },
)

export const SessionListParamsSchema = Type.Object(
  { cwd: Type.Optional(Type.String({ minLength: 1, description: 'Only sessions started in this directory.' })) },
  { title: 'SessionListParams', ...closed },
)

export const SessionListResultSchema = Type.Object(
  { sessions: Type.Array(SessionSummarySchema, { description: 'Newest first.' }) },
  { title: 'SessionListResult' },
)

export const SessionSearchParamsSchema = Type.Object(
  {
    query: Type.String({
      minLength: 1,
      description: 'Plain words (each a word prefix, all required); quotes, `*`, `-` and `:` are text, not syntax.',
    }),
    cwd: Type.Optional(Type.String({ minLength: 1, description: 'Only sessions started in this directory.' })),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: "Most sessions returned (default and maximum: the runtime's `searchLimit` and `maxSearchLimit`).",
      }),
    ),
  },
  { title: 'SessionSearchParams', ...closed },
)

export const HIT_SOURCES = ['user', 'assistant', 'tool-call', 'tool-result'] as const

export const HighlightSchema = Type.Object(
  { start: Type.Integer({ minimum: 0 }), end: Type.Integer({ minimum: 0 }) },
  {
    title: 'Highlight',
    description: 'A stretch of `snippet.text` that matched, as UTF-16 offsets (`text.slice(start, end)`).',
    ...closed,
  },
)

export const SearchHitSchema = Type.Object(
  {
    sessionId: Type.String(),
    cwd: Type.String(),
    title: Type.Optional(Type.String({ description: "The user's or generated title when the log has one." })),
    firstPrompt: Type.Optional(Type.String({ description: 'The first user prompt, shortened.' })),
    seq: Type.Integer({ minimum: 0, description: 'The event to open the session at.' }),
    source: stringEnum(HIT_SOURCES, { title: 'HitSource', description: 'Which part of the log the hit came from.' }),
    time: Type.Integer({ description: 'Epoch milliseconds of that event.' }),
    snippet: Type.Object(
      { text: Type.String(), highlights: Type.Array(HighlightSchema) },
      { title: 'Snippet', description: "A short excerpt of the event's text around the match.", ...closed },
    ),
    matches: Type.Integer({
      minimum: 1,
      description: 'Events of this session that matched (the hit shows the best one).',
    }),
  },
  { title: 'SearchHit', ...closed },
)

export const SessionSearchResultSchema = Type.Object(
  {
    hits: Type.Array(SearchHitSchema, {
      description: 'Best first, one per session, each at its best-ranked event (`seq`).',
    }),
  },
  { title: 'SessionSearchResult' },
)

export const SessionEventsParamsSchema = Type.Object(
  {
    sessionId: SessionId,
    fromSeq: Type.Optional(Type.Integer({ minimum: 0, description: 'First seq of the page (default 0).' })),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: "Events per page (default and maximum: the runtime's `pageSize` and `maxPageSize`).",
      }),
    ),
  },
  { title: 'SessionEventsParams', ...closed },
)

export const SessionEventsResultSchema = Type.Object(
  {
    events: Type.Array(SessionEventSchema),
    nextSeq: Type.Union([Type.Integer(), Type.Null()], {
      description: 'The seq of the next page, or null when this page reached the end of the log.',
    }),
    length: Type.Integer({ description: 'Events in the log.' }),
  },
  { title: 'SessionEventsResult' },
)

export const SessionSetModelParamsSchema = Type.Object(
  { sessionId: SessionId, route: RouteParamSchema },
  { title: 'SessionSetModelParams', ...closed },
)
export const SessionSetModelResultSchema = Type.Object({ route: RouteSchema }, { title: 'SessionSetModelResult' })

export const SessionSetPermissionParamsSchema = Type.Object(
  { sessionId: SessionId, preset: Type.String({ minLength: 1 }) },
  { title: 'SessionSetPermissionParams', ...closed },
)
export const SessionSetPlanModeParamsSchema = Type.Object(
  {
    sessionId: SessionId,
    active: Type.Boolean({ description: 'true: enter plan mode; false: leave it (the client acts for its user).' }),
  },
  { title: 'SessionSetPlanModeParams', ...closed },
)
export const SessionSetPlanModeResultSchema = Type.Object(
  { active: Type.Boolean() },
  { title: 'SessionSetPlanModeResult' },
)
export const SessionSetPermissionResultSchema = Type.Object(
  { preset: Type.String() },
  { title: 'SessionSetPermissionResult' },
)

export const SessionCommandParamsSchema = Type.Object(
  {
    sessionId: SessionId,
    line: Type.String({
      minLength: 1,
      description: 'The command as a user types it: `/name arguments` (`/fix-issue 123`).',
    }),
  },
  { title: 'SessionCommandParams', ...closed },
)

export const SessionCommandResultSchema = Type.Object(
  {
    handled: Type.Boolean({
      description:
        "Whether the line named a command of the session's workspace; when false nothing ran and nothing was sent.",
    }),
    unknown: Type.Optional(
      Type.String({ description: 'The `/word` no command has (the client may send the line as a prompt, saying so).' }),
    ),
    name: Type.Optional(Type.String({ description: 'The command that ran.' })),
    output: Type.Optional(Type.String({ description: 'What the command says to the user.' })),
    messageId: Type.Optional(
      Type.String({
        description:
          "A user command's expanded prompt was queued as the user's message: its receipt (the turn's events follow as `session.event`).",
      }),
    ),
    newSessionId: Type.Optional(Type.String({ description: '`/clear` and `/fork`: the session to continue in.' })),
    error: Type.Optional(
      Type.Object(
        { code: Type.String(), message: Type.String() },
        { title: 'CommandError', description: 'The command ran and failed.' },
      ),
    ),
  },
  { title: 'SessionCommandResult' },
)

export const CommandInfoSchema = Type.Object(
  {
    name: Type.String({ description: 'Without the slash.' }),
    description: Type.String(),
    argumentHint: Type.Optional(Type.String({ description: 'What the arguments look like (`<issue-number>`).' })),
    origin: Type.String({ description: "`dsh` for built-ins and plugins' commands, else the file that defines it." }),
  },
  { title: 'CommandInfo' },
)

export const SessionCommandsResultSchema = Type.Object(
  { commands: Type.Array(CommandInfoSchema, { description: 'Sorted by name.' }) },
  { title: 'SessionCommandsResult' },
)

// ── Review and rewind (docs/architecture.md, "Review and rewind") ────────────────────────────────────────

/** A file's state in the checkpoint store (`@dsh/checkpoints`' FileState). */
export const FileStateSchema = Type.Union(
  [
    Type.Object({ sha256: Type.String(), bytes: Type.Integer({ minimum: 0 }) }, { title: 'StoredFileState' }),
    Type.Object({ absent: Type.Literal(true) }, { title: 'AbsentFileState' }),
    Type.Object(
      { unrecorded: Type.String({ description: 'Why the content was not kept (too large, not read).' }) },
      { title: 'UnrecordedFileState' },
    ),
  ],
  { title: 'FileState' },
)

export const SessionChangesParamsSchema = Type.Object(
  {
    sessionId: SessionId,
    fromTurn: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: 'Compare against the state before this turn (default 1: before the session).',
      }),
    ),
  },
  { title: 'SessionChangesParams', ...closed },
)

/** One file a session changed (`@dsh/session-changes`' FileChange). */
export const FileChangeSchema = Type.Object(
  {
    path: Type.String({ description: 'Relative to the session folder when inside it.' }),
    status: stringEnum(['added', 'deleted', 'modified', 'unrecorded'] as const, { title: 'FileChangeStatus' }),
    before: FileStateSchema,
    after: FileStateSchema,
    beforeText: Type.Optional(Type.String()),
    afterText: Type.Optional(Type.String()),
    patch: Type.Optional(Type.String({ description: 'A unified diff, when both sides are text.' })),
    added: Type.Integer(),
    removed: Type.Integer(),
    note: Type.Optional(Type.String()),
  },
  { title: 'FileChange' },
)

export const SessionChangesResultSchema = Type.Object(
  {
    sessionId: Type.String(),
    fromTurn: Type.Integer(),
    turns: Type.Integer(),
    files: Type.Array(FileChangeSchema),
    notes: Type.Array(Type.String(), {
      description: 'What the review does not cover (commands outside a git repository, …).',
    }),
  },
  { title: 'SessionChangesResult' },
)

export const SessionUsageParamsSchema = Type.Object(
  {
    sessionId: SessionId,
    fromSeq: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: 'Count the requests logged from this seq on (default 0: the whole session).',
      }),
    ),
  },
  { title: 'SessionUsageParams', ...closed },
)

/** What a session's model requests used and cost, folded from its log by `@dsh/usage-kit` (the numbers of `dsh usage`). */
export const SessionUsageResultSchema = Type.Object(
  {
    requests: Type.Integer({ minimum: 0 }),
    input: Type.Integer({ minimum: 0, description: 'Input tokens, cache reads and writes excluded.' }),
    cacheRead: Type.Integer({ minimum: 0 }),
    cacheWrite: Type.Integer({ minimum: 0 }),
    output: Type.Integer({ minimum: 0, description: 'Output tokens, reasoning included.' }),
    reasoning: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: 'The reasoning part of `output`; absent when the provider reported no separate count.',
      }),
    ),
    cost: Type.Union([Type.Number({ minimum: 0 }), Type.Null()], {
      description:
        'USD from the price table (`usage.prices` over the shipped prices); null when a request ran on a model without a price.',
    }),
    cacheHitShare: Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], {
      description:
        'Cached input tokens / all input tokens (uncached, cache reads and writes), as the provider reported them; null with no input.',
    }),
    cacheSaved: Type.Union([Type.Number({ minimum: 0 }), Type.Null()], {
      description:
        "USD the provider's prompt cache saved (cache reads at the input price less their cached price); null when a request ran on a model without a price.",
    }),
    unpriced: Type.Array(Type.String(), { description: 'The `provider/model`s without a price.' }),
  },
  { title: 'SessionUsageResult' },
)

export const SessionRewindParamsSchema = Type.Object(
  {
    sessionId: SessionId,
    toTurn: Type.Integer({
      minimum: 1,
      description: 'Restore every file the session touched to its state before this turn.',
    }),
    force: Type.Optional(
      Type.Boolean({
        description: 'Overwrite files changed since by someone else (else they are reported as conflicts).',
      }),
    ),
    fork: Type.Optional(Type.Boolean({ description: "Also fork the conversation at the turn's start (`forkedTo`)." })),
  },
  { title: 'SessionRewindParams', ...closed },
)

const RewindProblemSchema = Type.Object({ path: Type.String(), reason: Type.String() }, { title: 'RewindProblem' })

/** What a rewind did (`@dsh/checkpoints`' RewindDone, as logged in `rewind/done`). */
export const SessionRewindResultSchema = Type.Object(
  {
    toTurn: Type.Integer(),
    forced: Type.Boolean(),
    restored: Type.Array(Type.Object({ path: Type.String(), state: FileStateSchema }, { title: 'RestoredFile' })),
    conflicts: Type.Array(RewindProblemSchema),
    skipped: Type.Array(RewindProblemSchema),
    forkedTo: Type.Optional(Type.String()),
    actor: Type.String(),
  },
  { title: 'SessionRewindResult' },
)

// ── The display fold (docs/architecture.md, "The display fold") ────────────────────────────────────────

export const SessionViewParamsSchema = Type.Object(
  {
    sessionId: SessionId,
    fromSeq: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: 'Only the items created by an event from this seq on (the whole log is folded; default 0).',
      }),
    ),
  },
  { title: 'SessionViewParams', ...closed },
)

/** What a session shows, folded from its log by `@dsh/session-view` (the items web, ACP, headless and the TypeScript SDK show). */
export const SessionViewResultSchema = Type.Object(
  {
    sessionId: Type.String(),
    items: Type.Array(ItemSchema, {
      description:
        'In log order: user and assistant messages, tool cards (with approvals and edits), notices, turn ends, subagents.',
    }),
    todos: Type.Array(TodoEntrySchema, { description: "The agent's task list as its last `todo/updated` left it." }),
    length: Type.Integer({ minimum: 0, description: "Events folded: the log's length when it was read." }),
  },
  { title: 'SessionViewResult' },
)
export const SessionDeleteResultSchema = Type.Object(
  {
    deleted: Type.Array(Type.String(), {
      description: 'The sessions deleted: the one asked for first, then its subagent children.',
    }),
  },
  { title: 'SessionDeleteResult' },
)

export const SessionRenameParamsSchema = Type.Object(
  {
    sessionId: SessionId,
    title: Type.String({
      minLength: 1,
      description: "The user's title (one line; it is never replaced by a generated one).",
    }),
  },
  { title: 'SessionRenameParams', ...closed },
)
export const SessionRenameResultSchema = Type.Object(
  { title: Type.String({ description: 'The title as logged (whitespace folded to single spaces).' }) },
  { title: 'SessionRenameResult' },
)

export const EmptySchema = Type.Object({}, { title: 'Empty', ...closed })

/** Every request the client sends: its params and its result. The order is the spec's. */
export const CLIENT_METHOD_SCHEMAS = {
  initialize: { params: InitializeParamsSchema, result: InitializeResultSchema },
  'session/new': { params: SessionNewParamsSchema, result: SessionOpenedResultSchema },
  'session/prompt': { params: SessionPromptParamsSchema, result: SessionPromptResultSchema },
  'session/cancel': { params: SessionRefSchema, result: SessionCancelResultSchema },
  'session/resume': { params: SessionResumeParamsSchema, result: SessionOpenedResultSchema },
  'session/fork': { params: SessionForkParamsSchema, result: SessionOpenedResultSchema },
  'session/list': { params: SessionListParamsSchema, result: SessionListResultSchema },
  'session/search': { params: SessionSearchParamsSchema, result: SessionSearchResultSchema },
  'session/events': { params: SessionEventsParamsSchema, result: SessionEventsResultSchema },
  'session/setModel': { params: SessionSetModelParamsSchema, result: SessionSetModelResultSchema },
  'session/setPermission': { params: SessionSetPermissionParamsSchema, result: SessionSetPermissionResultSchema },
  'session/setPlanMode': { params: SessionSetPlanModeParamsSchema, result: SessionSetPlanModeResultSchema },
  'session/commands': { params: SessionRefSchema, result: SessionCommandsResultSchema },
  'session/command': { params: SessionCommandParamsSchema, result: SessionCommandResultSchema },
  'session/changes': { params: SessionChangesParamsSchema, result: SessionChangesResultSchema },
  'session/rewind': { params: SessionRewindParamsSchema, result: SessionRewindResultSchema },
  'session/usage': { params: SessionUsageParamsSchema, result: SessionUsageResultSchema },
  'session/view': { params: SessionViewParamsSchema, result: SessionViewResultSchema },
  'session/rename': { params: SessionRenameParamsSchema, result: SessionRenameResultSchema },
  'session/delete': { params: SessionRefSchema, result: SessionDeleteResultSchema },
  shutdown: { params: EmptySchema, result: EmptySchema },
} satisfies Record<string, { params: TSchema; result: TSchema }>

// ── Notifications and requests (runtime → client) ──────────────────────────────────────────────────────

export const SessionEventNotificationSchema = Type.Object(
  { sessionId: Type.String(), event: SessionEventSchema },
  { title: 'SessionEventNotification' },
)

export const SessionStatusNotificationSchema = Type.Object(
  { sessionId: Type.String(), status: stringEnum(SESSION_STATUSES, { title: 'SessionStatus' }) },
  { title: 'SessionStatusNotification' },
)

export const SERVER_NOTIFICATION_SCHEMAS = {
  /** Every event committed to the log of a session of this runtime, in log order. */
  'session.event': SessionEventNotificationSchema,
  /** A session's agent started working (`running`) or finished everything queued (`idle`). */
  'session.status': SessionStatusNotificationSchema,
} satisfies Record<string, TSchema>

export const ApprovalRequestParamsSchema = Type.Object(
  {
    requestId: Type.String(),
    sessionId: Type.String(),
    callId: Type.Optional(Type.String()),
    tool: Type.String(),
    summary: Type.String({ description: "A short human summary of the call's arguments (`bash: rm -rf build`)." }),
    reason: Type.String({ description: 'Why approval is needed.' }),
    rule: Type.Optional(
      Type.String({
        description:
          'The grant rule `allow_session` / `allow_always` would keep (`unconfined(npm test *)`); absent: only `allow_once` or `reject`.',
      }),
    ),
    arguments: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: "The call's arguments as the model gave them (valid against the tool's schema).",
      }),
    ),
  },
  { title: 'ApprovalRequestParams' },
)

export const ApprovalAnswerSchema = stringEnum(APPROVAL_ANSWERS, { title: 'ApprovalAnswer' })

export const ApprovalResultSchema = Type.Object(
  {
    answer: ApprovalAnswerSchema,
    message: Type.Optional(
      Type.String({ minLength: 1, description: 'With `reject`: what the model reads about the refusal.' }),
    ),
    arguments: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description:
          "With `allow_once` only: the arguments the call runs with instead of the model's (validated again; logged as `tool/edited`).",
      }),
    ),
  },
  { title: 'ApprovalResult' },
)

export const ToolCallParamsSchema = Type.Object(
  {
    sessionId: Type.String(),
    callId: Type.String(),
    tool: Type.String({ description: 'A tool this client registered on `session/new`.' }),
    arguments: Type.Record(Type.String(), Type.Unknown(), {
      description: "Already valid against the tool's `parameters`.",
    }),
  },
  { title: 'ToolCallParams' },
)

export const ToolCallResultSchema = Type.Object(
  {
    content: Type.Union([Type.String(), Type.Array(Type.Union([TextContentSchema, ImageContentSchema]))], {
      description: 'What the model reads: text, or text and image blocks.',
    }),
    isError: Type.Optional(
      Type.Boolean({
        description: 'true: the call failed (the model reads `content` as the error; code TOOL_FAILED).',
      }),
    ),
  },
  { title: 'ToolCallResult', ...closed },
)

export const SERVER_REQUEST_SCHEMAS = {
  'approval/request': { params: ApprovalRequestParamsSchema, result: ApprovalResultSchema },
  /** The model called a client tool: the answer is its result (an error reply, a timeout or a malformed answer is a TOOL_FAILED / TOOL_TIMEOUT result). */
  'tool/call': { params: ToolCallParamsSchema, result: ToolCallResultSchema },
} satisfies Record<string, { params: TSchema; result: TSchema }>

export type { Static, TSchema }
