// The web surface's wire contract, declared once (docs/architecture.md, "Surfaces"): TypeBox
// schemas are JSON Schema; index.ts derives the TypeScript types from them (type-only, so the browser
// bundle carries no schema code), and `npm run generate:protocol` writes web-protocol.schema.json (checked
// by scripts/gates/protocol-generated.mjs). Every named schema has a `title`: the generator names it so.
// Nothing here may import Node or browser APIs.
import { Type, type TLiteral, type TSchema, type TUnion } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'

/** One of `values`, as a union of literals (so TypeBox's own checker, `checkWire`, knows it). */
const stringEnum = <const T extends readonly string[]>(
  values: T,
  options: { title?: string; description?: string } = {},
) =>
  Type.Union(
    values.map((value) => Type.Literal(value)),
    options,
  ) as unknown as TUnion<TLiteral<T[number]>[]>

/** The answers a tab may give to an approval (a new answer is one more value here). */
export const WEB_APPROVAL_ANSWERS = ['allow_once', 'allow_session', 'allow_always', 'reject'] as const

/** A session event as it travels: the log's `{ type, seq, time, data }`; `data` stays open (kinds grow with plugins). */
export const WireEventSchema = Type.Object(
  {
    type: Type.String(),
    seq: Type.Integer({ minimum: 0 }),
    time: Type.Integer(),
    data: Type.Any(),
    ignorable: Type.Optional(Type.Literal(true)),
  },
  { title: 'WireEvent' },
)

export const ApiErrorSchema = Type.Object({ code: Type.String(), message: Type.String() }, { title: 'ApiError' })

export const WireRouteSchema = Type.Object(
  { provider: Type.String(), model: Type.String(), effort: Type.Optional(Type.String()) },
  { title: 'WireRoute' },
)

/** An agent's state in the host process; `null` when no agent holds the session here. */
export const AgentStateSchema = Type.Union([Type.Literal('idle'), Type.Literal('running'), Type.Null()], {
  title: 'AgentState',
})

const ParentSchema = Type.Object({ id: Type.String(), atSeq: Type.Integer() }, { title: 'SessionParent' })

export const SessionListItemSchema = Type.Object(
  {
    id: Type.String(),
    cwd: Type.String(),
    createdAt: Type.Integer(),
    updatedAt: Type.Integer(),
    events: Type.Integer(),
    turns: Type.Integer(),
    title: Type.Optional(Type.String()),
    firstPrompt: Type.Optional(
      Type.String({
        description: 'The first user prompt, mention markup removed, shortened: the title until one is logged.',
      }),
    ),
    archived: Type.Optional(Type.Boolean({ description: 'Hidden from the default list (`session/archived`).' })),
    damaged: Type.Optional(
      Type.String({
        description: 'Why the stored log cannot be opened (file, line, field); the session cannot be resumed.',
      }),
    ),
    status: stringEnum(['idle', 'open'] as const, { description: '`open` when the last turn never ended.' }),
    lockedElsewhere: Type.Boolean({ description: 'Another process holds the writer lease.' }),
    agent: AgentStateSchema,
    pendingApprovals: Type.Integer(),
    parent: Type.Optional(ParentSchema),
    subagentOf: Type.Optional(
      Type.Object(
        { id: Type.String(), description: Type.String() },
        {
          title: 'SubagentLink',
          description:
            "A subagent's child session: the session that started it (listed under it) and the task's description (its name).",
        },
      ),
    ),
  },
  { title: 'SessionListItem' },
)

export const SearchHitSchema = Type.Object(
  {
    sessionId: Type.String(),
    field: stringEnum(['title', 'text'] as const, {
      description: 'Where the text matched: the title or first prompt, or a message.',
    }),
    snippet: Type.String({ description: 'A short excerpt around the match.' }),
    highlights: Type.Optional(
      Type.Array(
        Type.Object(
          { start: Type.Integer({ minimum: 0 }), end: Type.Integer({ minimum: 0 }) },
          { title: 'SnippetHighlight' },
        ),
        {
          description: "The stretches of `snippet` that matched (UTF-16 offsets), when the host's index marks them.",
        },
      ),
    ),
    seq: Type.Optional(Type.Integer()),
  },
  { title: 'SearchHit' },
)

export const ModelDescriptionSchema = Type.Object(
  {
    id: Type.String(),
    contextWindow: Type.Integer(),
    maxOutputTokens: Type.Optional(Type.Integer()),
    images: Type.Boolean(),
    reasoning: Type.Boolean(),
    efforts: Type.Optional(Type.Array(Type.String())),
  },
  { title: 'ModelDescription' },
)

export const ProviderModelsSchema = Type.Object(
  {
    provider: Type.String(),
    models: Type.Array(ModelDescriptionSchema),
    error: Type.Optional(
      Type.String({ description: 'Why the catalogue could not be listed (the picker still offers the provider).' }),
    ),
    ready: Type.Boolean({
      description:
        "Whether a request could be sent now: the adapter's `ready()` (a key is set), true when it cannot tell.",
    }),
    notReady: Type.Optional(
      Type.Object(
        { code: Type.String(), message: Type.String() },
        { title: 'ApiError', description: "Why it is not ready, in the adapter's words (never a value)." },
      ),
    ),
  },
  { title: 'ProviderModels' },
)

/** How full a session's context is (the token meter's fold over the log). */
export const WirePressureSchema = Type.Object(
  {
    tokens: Type.Integer(),
    window: Type.Integer(),
    ratio: Type.Number(),
    source: stringEnum(['usage', 'estimate'] as const),
  },
  { title: 'WirePressure' },
)

/** An agent preset a new session may be created with (not a permission preset). */
export const AgentPresetViewSchema = Type.Object(
  { name: Type.String(), description: Type.String(), source: Type.String() },
  { title: 'AgentPresetView' },
)

export const SessionViewSchema = Type.Object(
  {
    id: Type.String(),
    cwd: Type.String(),
    createdAt: Type.Integer(),
    parent: Type.Optional(ParentSchema),
    length: Type.Integer({ description: 'Number of events in the log now; live events follow from this seq.' }),
    agent: AgentStateSchema,
    route: WireRouteSchema,
    preset: Type.Optional(
      Type.String({ description: 'The permission preset in force, when the presets plugin is mounted.' }),
    ),
    agentPreset: Type.Optional(
      Type.String({ description: 'The agent preset the session was created with (absent: standard, every tool).' }),
    ),
    planMode: Type.Optional(Type.Boolean({ description: 'Whether the session is in plan mode (only reading runs).' })),
    pendingApprovals: Type.Array(Type.String(), {
      description: 'Approval requests waiting for an answer (any tab may answer; the first answer wins).',
    }),
    lockedElsewhere: Type.Boolean(),
    title: Type.Optional(Type.String()),
    pressure: Type.Optional(WirePressureSchema),
  },
  { title: 'SessionView' },
)

export const PageResultSchema = Type.Object(
  {
    events: Type.Array(WireEventSchema, {
      description: 'Events with `start <= seq < end`, without superseded stream chunks and bulky request headers.',
    }),
    start: Type.Integer(),
    end: Type.Integer(),
  },
  { title: 'PageResult' },
)

export const SettingViewSchema = Type.Object(
  {
    key: Type.String(),
    value: Type.Unknown(),
    default: Type.Unknown(),
    description: Type.String(),
    source: Type.String(),
    origin: Type.Optional(Type.String()),
  },
  { title: 'SettingView' },
)

export const McpServerViewSchema = Type.Object(
  {
    name: Type.String(),
    origin: stringEnum(['user', 'workspace', 'acp', 'sdk', 'cli'] as const),
    source: Type.String({ description: 'The file or request it was read from.' }),
    transport: stringEnum(['stdio', 'http', 'sse'] as const),
    trust: stringEnum(['ask', 'allow'] as const),
    state: Type.String({
      description: "The session log's last mcp/status (started, failed, crashed, stopped, refused), or `not started`.",
    }),
    message: Type.Optional(Type.String()),
    tools: Type.Array(Type.Object({ name: Type.String(), description: Type.String() }), {
      description: "The session log's last mcp/catalog of the server.",
    }),
  },
  {
    title: 'McpServerView',
    description: 'An MCP server as the settings page shows it: never a command line, an environment or a header value.',
  },
)

export const CredentialViewSchema = Type.Object(
  {
    provider: Type.Optional(Type.String({ description: 'The provider that reads it, when known.' })),
    name: Type.String(),
    set: Type.Boolean(),
    source: stringEnum(['env', 'home-file', 'dotenv', 'missing'] as const),
    location: Type.Optional(Type.String()),
    howToSet: Type.String({ description: 'Where the user can set it (names places, never values).' }),
  },
  { title: 'CredentialView' },
)

export const CompositionRowSchema = Type.Recursive(
  (Row) =>
    Type.Object({
      id: Type.String(),
      name: Type.Optional(Type.String()),
      disabled: Type.Optional(Type.Unknown()),
      config: Type.Optional(Type.Unknown()),
      setBy: Type.Array(Type.String(), {
        description:
          "The layers that touched the row, as the dump's comment says (`bundle @dsh/bundle-base:12 (name)`).",
      }),
      children: Type.Optional(Type.Array(Row)),
    }),
  { $id: 'CompositionRow', title: 'CompositionRow' },
)

export const DirectoryEntrySchema = Type.Object(
  {
    name: Type.String(),
    path: Type.String(),
    isDirectory: Type.Boolean(),
    git: Type.Optional(Type.Boolean({ description: 'The folder is a git repository (it holds `.git`).' })),
  },
  { title: 'DirectoryEntry' },
)

/** An image as the page sends or shows it: base64 bytes and their media type. */
export const InlineImageSchema = Type.Object(
  { mediaType: Type.String(), data: Type.String() },
  { title: 'InlineImage' },
)

/** What this launch offers the page. */
export const HostInfoSchema = Type.Object(
  {
    version: Type.String(),
    profile: Type.String(),
    attachments: Type.Boolean({ description: 'Images can be attached (an attachments plugin is mounted).' }),
  },
  { title: 'HostInfo' },
)

/** A file's state in the checkpoint store (`@dsh/checkpoints`' FileState). */
export const FileStateSchema = Type.Union(
  [
    Type.Object({ sha256: Type.String(), bytes: Type.Integer({ minimum: 0 }) }),
    Type.Object({ absent: Type.Literal(true) }),
    Type.Object({ unrecorded: Type.String() }),
  ],
  { title: 'FileState' },
)

/** One file a session changed (`@dsh/session-changes`' FileChange): both texts when they are text, for a numbered diff. */
export const FileChangeSchema = Type.Object(
  {
    path: Type.String(),
    status: stringEnum(['added', 'deleted', 'modified', 'unrecorded'] as const),
    before: FileStateSchema,
    after: FileStateSchema,
    beforeText: Type.Optional(Type.String()),
    afterText: Type.Optional(Type.String()),
    patch: Type.Optional(Type.String()),
    added: Type.Integer(),
    removed: Type.Integer(),
    note: Type.Optional(Type.String()),
  },
  { title: 'FileChange' },
)

export const SessionChangesSchema = Type.Object(
  {
    sessionId: Type.String(),
    fromTurn: Type.Integer(),
    turns: Type.Integer(),
    files: Type.Array(FileChangeSchema),
    notes: Type.Array(Type.String()),
  },
  { title: 'SessionChanges' },
)

const RewindProblemSchema = Type.Object({ path: Type.String(), reason: Type.String() }, { title: 'RewindProblem' })

/** What a rewind did (`@dsh/checkpoints`' RewindDone, as logged). */
export const RewindDoneSchema = Type.Object(
  {
    toTurn: Type.Integer(),
    forced: Type.Boolean(),
    restored: Type.Array(Type.Object({ path: Type.String(), state: FileStateSchema })),
    conflicts: Type.Array(RewindProblemSchema),
    skipped: Type.Array(RewindProblemSchema),
    forkedTo: Type.Optional(Type.String()),
    actor: Type.String(),
  },
  { title: 'RewindDone' },
)

const Empty = Type.Object({})
const SessionRef = Type.Object({ sessionId: Type.String() })

/** A slash command of a session's workspace, as the composer completes it. */
export const WebCommandSchema = Type.Object(
  {
    name: Type.String({ description: 'Without the slash.' }),
    description: Type.String(),
    argumentHint: Type.Optional(Type.String()),
    origin: Type.String({ description: '`dsh`, or the file of a user command.' }),
  },
  { title: 'WebCommand' },
)

/** What running a line as a command came to. `unknown`: no command has that `/word`, nothing ran (`notice` says what the page tells the user). */
export const CommandRunResultSchema = Type.Object(
  {
    handled: Type.Boolean(),
    unknown: Type.Optional(Type.String()),
    notice: Type.Optional(Type.String()),
    name: Type.Optional(Type.String()),
    output: Type.Optional(Type.String()),
    messageId: Type.Optional(Type.String({ description: "A user command's prompt was sent as the user's message." })),
    newSessionId: Type.Optional(Type.String({ description: '`/clear`, `/fork`: the session to open.' })),
    error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() })),
  },
  { title: 'CommandRunResult' },
)

const UsageSumsFields = {
  requests: Type.Integer({ minimum: 0 }),
  input: Type.Integer({ minimum: 0, description: 'Input tokens not read from or written to a cache.' }),
  cacheRead: Type.Integer({ minimum: 0 }),
  cacheWrite: Type.Integer({ minimum: 0 }),
  output: Type.Integer({ minimum: 0, description: 'Output tokens, reasoning included.' }),
  reasoning: Type.Optional(
    Type.Integer({
      minimum: 0,
      description: 'The reasoning part of `output`; absent when no provider of these requests reported one.',
    }),
  ),
  cost: Type.Union([Type.Number({ minimum: 0 }), Type.Null()], {
    description: 'USD; null when a model used has no price.',
  }),
  cacheHitShare: Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], {
    description: 'Cached input tokens / all input tokens; null with no input.',
  }),
  cacheSaved: Type.Union([Type.Number({ minimum: 0 }), Type.Null()], {
    description: "USD the provider's prompt cache saved; null when a model used has no price.",
  }),
  unpriced: Type.Array(Type.String(), { description: 'The `provider/model`s without a price.' }),
}

/** Summed logged usage (`@dsh/usage-kit`), priced by `ctx.usagePrices`. */
export const UsageSumsSchema = Type.Object(UsageSumsFields, { title: 'UsageSums' })
/** A session's usage with its last turn's beside it (the session header shows both). */
export const SessionUsageSchema = Type.Object(
  { ...UsageSumsFields, turn: Type.Optional(UsageSumsSchema) },
  { title: 'SessionUsage' },
)
export const UsageGroupSchema = Type.Object({ key: Type.String(), ...UsageSumsFields }, { title: 'UsageGroup' })
/** The same report as `dsh usage --json` (without its `scope`/`by`/`since` echo). */
export const UsageReportSchema = Type.Object(
  {
    sessions: Type.Integer({ minimum: 0 }),
    groups: Type.Array(UsageGroupSchema),
    total: UsageSumsSchema,
    damaged: Type.Array(Type.Object({ id: Type.String(), reason: Type.String() })),
  },
  { title: 'UsageReport' },
)

/** Every method of `POST /api/<method>`: its params and its result. */
export const WEB_METHOD_SCHEMAS = {
  'sessions.list': {
    params: Empty,
    result: Type.Object({ sessions: Type.Array(SessionListItemSchema), launchCwd: Type.String() }),
  },
  'sessions.search': {
    params: Type.Object({ query: Type.String() }),
    result: Type.Object({ hits: Type.Array(SearchHitSchema) }),
  },
  'sessions.open': { params: SessionRef, result: SessionViewSchema },
  'sessions.page': {
    params: Type.Object({
      sessionId: Type.String(),
      before: Type.Optional(Type.Integer({ minimum: 0 })),
      limit: Type.Optional(Type.Integer({ minimum: 1 })),
    }),
    result: PageResultSchema,
  },
  'sessions.create': {
    params: Type.Object({
      cwd: Type.String(),
      route: Type.Optional(WireRouteSchema),
      preset: Type.Optional(Type.String({ description: 'Permission preset.' })),
      agentPreset: Type.Optional(
        Type.String({
          description: 'Agent preset (standard, explore, minimal, a user preset): the tools the session is offered.',
        }),
      ),
      planMode: Type.Optional(Type.Boolean({ description: 'Start in plan mode.' })),
    }),
    result: SessionRef,
  },
  'sessions.changes': {
    params: Type.Object({ sessionId: Type.String(), fromTurn: Type.Optional(Type.Integer({ minimum: 1 })) }),
    result: SessionChangesSchema,
  },
  'sessions.rewind': {
    params: Type.Object({
      sessionId: Type.String(),
      toTurn: Type.Integer({ minimum: 1 }),
      force: Type.Optional(Type.Boolean()),
      fork: Type.Optional(Type.Boolean()),
    }),
    result: RewindDoneSchema,
  },
  'sessions.fork': {
    params: Type.Object({ sessionId: Type.String(), atSeq: Type.Integer({ minimum: 0 }) }),
    result: SessionRef,
  },
  /** A user title (`session/title`, source `user`; a generated one never replaces it); the result is the title as logged. */
  'sessions.rename': {
    params: Type.Object({ sessionId: Type.String(), title: Type.String({ minLength: 1 }) }),
    result: Type.Object({ title: Type.String() }),
  },
  /** Deletes a stored session with its subagent children; the result lists the ids deleted. */
  'sessions.delete': { params: SessionRef, result: Type.Object({ deleted: Type.Array(Type.String()) }) },
  'agent.send': {
    params: Type.Object({
      sessionId: Type.String(),
      text: Type.String(),
      mode: Type.Optional(stringEnum(['followup', 'steer'] as const)),
      images: Type.Optional(Type.Array(InlineImageSchema)),
    }),
    result: Type.Object({ messageId: Type.String() }),
  },
  'commands.list': { params: SessionRef, result: Type.Object({ commands: Type.Array(WebCommandSchema) }) },
  'commands.run': {
    params: Type.Object({ sessionId: Type.String(), line: Type.String() }),
    result: CommandRunResultSchema,
  },
  'agent.cancel': { params: SessionRef, result: Type.Object({ cancelled: Type.Boolean() }) },
  'agent.setRoute': {
    params: Type.Object({ sessionId: Type.String(), route: WireRouteSchema }),
    result: Type.Object({ route: WireRouteSchema }),
  },
  'agent.setPreset': {
    params: Type.Object({ sessionId: Type.String(), preset: Type.String() }),
    result: Type.Object({ preset: Type.String() }),
  },
  'attachments.get': {
    params: Type.Object({ sessionId: Type.String(), sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }) }),
    result: InlineImageSchema,
  },
  'host.info': { params: Empty, result: HostInfoSchema },
  'approvals.answer': {
    params: Type.Object({
      requestId: Type.String(),
      answer: stringEnum(WEB_APPROVAL_ANSWERS, { title: 'WebApprovalAnswer' }),
      /** With allow_session / allow_always: the rule to keep, as the person edited the suggestion (it must cover this call). */
      rule: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
    }),
    result: Type.Object({ answered: Type.Literal(true) }),
  },
  'models.list': {
    params: Empty,
    result: Type.Object({ providers: Type.Array(ProviderModelsSchema), defaultRoute: WireRouteSchema }),
  },
  'agentPresets.list': { params: Empty, result: Type.Object({ agentPresets: Type.Array(AgentPresetViewSchema) }) },
  'agent.setPlanMode': {
    params: Type.Object({ sessionId: Type.String(), active: Type.Boolean() }),
    result: Type.Object({ active: Type.Boolean() }),
  },
  'presets.list': {
    params: Empty,
    result: Type.Object({ presets: Type.Array(Type.String()), defaultPreset: Type.Optional(Type.String()) }),
  },
  'settings.list': { params: Empty, result: Type.Object({ settings: Type.Array(SettingViewSchema) }) },
  'settings.set': {
    params: Type.Object({ key: Type.String(), value: Type.Unknown() }),
    result: Type.Object({ setting: SettingViewSchema }),
  },
  'settings.reset': {
    params: Type.Object({ key: Type.String() }),
    result: Type.Object({ setting: SettingViewSchema }),
  },
  'credentials.list': { params: Empty, result: Type.Object({ credentials: Type.Array(CredentialViewSchema) }) },
  'mcp.servers': {
    params: Type.Object({
      cwd: Type.Optional(Type.String({ description: 'Default: where dsh web started.' })),
      sessionId: Type.Optional(Type.String()),
    }),
    result: Type.Object({ servers: Type.Array(McpServerViewSchema) }),
  },
  'credentials.set': {
    params: Type.Object({ name: Type.String(), value: Type.String() }),
    result: Type.Object({ credential: CredentialViewSchema }),
  },
  'credentials.remove': {
    params: Type.Object({ name: Type.String() }),
    result: Type.Object({ credential: CredentialViewSchema }),
  },
  'composition.get': {
    params: Empty,
    result: Type.Object({
      text: Type.String(),
      header: Type.Array(Type.String()),
      rows: Type.Array(CompositionRowSchema),
    }),
  },
  'usage.report': {
    params: Type.Object({
      by: stringEnum(['model', 'workspace', 'day'] as const),
      cwd: Type.Optional(Type.String({ description: 'Only sessions of this workspace; absent: every workspace.' })),
      since: Type.Optional(Type.Integer({ minimum: 0, description: 'Epoch ms: only requests logged at or after it.' })),
    }),
    result: UsageReportSchema,
  },
  'usage.session': { params: SessionRef, result: SessionUsageSchema },
  'files.list': {
    params: Type.Object({
      path: Type.Optional(Type.String({ description: 'Absolute, `~`, `~/x`, or relative to the home.' })),
    }),
    result: Type.Object({
      path: Type.String(),
      root: Type.String({ description: 'The openable root holding `path`.' }),
      home: Type.String({ description: "The user's home (what the picker's Home opens)." }),
      roots: Type.Array(Type.String(), {
        description: 'Every folder a tab may open (home, launch folder, --allow-root).',
      }),
      parent: Type.Optional(Type.String()),
      entries: Type.Array(DirectoryEntrySchema),
    }),
  },
} satisfies Record<string, { params: TSchema; result: TSchema }>

/** Browser → host over the WebSocket. */
export const ClientMessageSchema = Type.Union(
  [
    Type.Object(
      { op: Type.Literal('sub'), ch: Type.String(), key: Type.String(), params: Type.Optional(Type.Unknown()) },
      { title: 'SubscribeMessage' },
    ),
    Type.Object({ op: Type.Literal('unsub'), ch: Type.String(), key: Type.String() }, { title: 'UnsubscribeMessage' }),
  ],
  { title: 'ClientMessage' },
)

/** Host → browser: each WebSocket message is a JSON array of frames (batched per tick). */
export const FrameSchema = Type.Union(
  [
    Type.Object({
      ch: Type.Literal('session'),
      key: Type.String(),
      type: Type.Literal('event'),
      event: WireEventSchema,
    }),
    Type.Object(
      { ch: Type.Literal('session'), key: Type.String(), type: Type.Literal('reset'), length: Type.Integer() },
      { description: "The gap since the client's `since` is too long to replay: reload the view by pages." },
    ),
    Type.Object({
      ch: Type.Literal('session'),
      key: Type.String(),
      type: Type.Literal('pressure'),
      pressure: WirePressureSchema,
    }),
    Type.Object({
      ch: Type.Literal('sessions'),
      key: Type.Literal('*'),
      type: Type.Literal('changed'),
      sessionId: Type.String(),
    }),
    Type.Object({
      ch: Type.Literal('sessions'),
      key: Type.Literal('*'),
      type: Type.Literal('agent'),
      sessionId: Type.String(),
      agent: AgentStateSchema,
    }),
    Type.Object({
      ch: Type.Literal('sessions'),
      key: Type.Literal('*'),
      type: Type.Literal('approvals'),
      sessionId: Type.String(),
      pending: Type.Integer(),
    }),
    Type.Object({ ch: Type.Literal('error'), key: Type.String(), message: Type.String() }),
  ],
  { title: 'Frame' },
)

/** Checks a value against one of these schemas (TypeBox's own checker: no code generation, browser-safe). */
export function checkWire(schema: TSchema, value: unknown): { path: string; message: string } | undefined {
  const first = Value.Errors(schema, value).First()
  return first ? { path: first.path, message: first.message } : undefined
}
