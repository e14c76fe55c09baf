// The fold's output shapes, declared once as TypeBox schemas (JSON Schema): the TypeScript types of items.ts
// are `Static<…>` of them, @dsh/sdk-protocol puts them in the SDK protocol (`session/view`), and
// `npm run generate:protocol` writes them out as Python TypedDicts (python/sdk/dsh/protocol.py). Every
// schema has a `title`: the generators name the types by it.
import { Type, type Static, type TSchema } from '@sinclair/typebox'

/** A string that is one of `values` (a plain JSON Schema `enum`, typed as the union of the values). */
const oneOf = <const T extends readonly string[]>(values: T, options: { title?: string; description?: string } = {}) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options })

const optional = <T extends TSchema>(schema: T) => Type.Optional(schema)
/** Objects are closed: a field the fold adds and this file does not declare fails the protocol's conformance test. */
const closed = { additionalProperties: false } as const
/** A named schema where one field uses it, with what it means there. */
const described = <T extends TSchema>(schema: T, description: string): T => ({ ...schema, description })

export const UsageSchema = Type.Object(
  {
    input: Type.Integer(),
    output: Type.Integer(),
    cacheRead: Type.Integer(),
    cacheWrite: Type.Integer(),
    reasoning: optional(
      Type.Integer({
        description: 'The reasoning part of `output`; absent when the provider reports no separate count.',
      }),
    ),
  },
  {
    title: 'Usage',
    ...closed,
    description: "A model request's tokens as logged (`input` excludes cache reads and writes).",
  },
)

export const ErrorInfoSchema = Type.Object(
  { code: Type.String(), message: Type.String() },
  { title: 'ErrorInfo', ...closed },
)

export const BlockSchema = Type.Object(
  {
    type: Type.String({ description: '`text` or `image`.' }),
    text: optional(Type.String()),
    mediaType: optional(Type.String()),
    sha256: optional(Type.String({ description: 'A stored image, by hash.' })),
    data: optional(Type.String({ description: 'An inline image, as base64.' })),
    description: optional(Type.String()),
  },
  {
    title: 'Block',
    ...closed,
    description: 'A content block of a user message or a tool result, as logged (text, or an image stored or inline).',
  },
)

export const ImageRefSchema = Type.Object(
  { mediaType: Type.String(), sha256: optional(Type.String()), data: optional(Type.String()) },
  {
    title: 'ImageRef',
    ...closed,
    description: 'An image of a user message: stored (by hash) or, before the attachments plugin took it, inline.',
  },
)

export const APPROVAL_DECISIONS = ['allow_once', 'allow_session', 'allow_always', 'reject'] as const

export const ApprovalInfoSchema = Type.Object(
  {
    requestId: Type.String(),
    tool: Type.String(),
    summary: Type.String(),
    reason: Type.String(),
    callId: optional(Type.String()),
    rule: optional(
      Type.String({
        description: 'The grant rule an "allow for this session / always" answer keeps; absent: only once or reject.',
      }),
    ),
    decided: optional(
      Type.Object(
        {
          answer: oneOf(APPROVAL_DECISIONS, { title: 'ApprovalDecision' }),
          by: Type.String(),
          note: optional(Type.String()),
        },
        { title: 'ApprovalDecided', ...closed },
      ),
    ),
  },
  { title: 'ApprovalInfo', ...closed },
)

export const CHANGE_STATES = ['proposed', 'applied', 'refused', 'unknown'] as const
export const ChangeStateSchema = oneOf(CHANGE_STATES, { title: 'ChangeState' })

export const ReplacementSchema = Type.Object(
  { oldText: Type.String(), newText: Type.String() },
  { title: 'Replacement', ...closed },
)

export const ProposedChangeSchema = Type.Union(
  [
    Type.Object(
      {
        kind: Type.Literal('replace'),
        path: Type.String(),
        edits: Type.Array(ReplacementSchema),
        replaceAll: Type.Boolean(),
      },
      {
        title: 'ReplaceChange',
        ...closed,
        description: 'Fragments replaced in order (`replaceAll`: every occurrence of a single one).',
      },
    ),
    Type.Object(
      { kind: Type.Literal('write'), path: Type.String(), content: Type.String() },
      { title: 'WriteChange', ...closed, description: 'The whole file written.' },
    ),
    Type.Object(
      { kind: Type.Literal('insert'), path: Type.String(), text: Type.String(), line: optional(Type.Integer()) },
      {
        title: 'InsertChange',
        ...closed,
        description: 'Text inserted after a line (`str_replace_editor insert`), nothing replaced.',
      },
    ),
  ],
  { title: 'ProposedChange', description: 'What an editing call proposes to change, read from its arguments.' },
)

export const RetryInfoSchema = Type.Object(
  {
    attempt: optional(Type.Integer()),
    maxRetries: optional(Type.Integer()),
    code: optional(Type.String()),
    delayMs: optional(Type.Number()),
    failure: optional(described(ErrorInfoSchema, 'The error of the request that failed and is being tried again.')),
  },
  {
    title: 'RetryInfo',
    ...closed,
    description: 'An `llm/retry`, its fields checked one by one (logs written before `maxRetries` existed lack it).',
  },
)

export const NOTICE_CAUSES = [
  'summary',
  'compaction',
  'route',
  'preset',
  'sandbox',
  'approval-policy',
  'retry',
  'hook',
  'subagent',
  'plan-mode',
  'agent-preset',
  'job',
  'rewind',
  'skills',
] as const
export const NoticeCauseSchema = oneOf(NOTICE_CAUSES, {
  title: 'NoticeCause',
  description: 'Why a notice is shown, for surfaces that present some notices and not others.',
})

const itemBase = {
  key: Type.String({ description: "Stable for the item's life (the React key, the ACP id)." }),
  version: Type.Number({
    description:
      'The seq of the last event that changed the item (a half step past the last seq when `settle` changed it): equal versions, equal content.',
  }),
  seq: Type.Integer({ description: 'The seq of the event that created it.' }),
}

export const UserItemSchema = Type.Object(
  {
    kind: Type.Literal('user'),
    ...itemBase,
    text: Type.String(),
    source: Type.String(),
    images: Type.Array(ImageRefSchema),
    content: Type.Array(BlockSchema, { description: "The message's blocks as logged." }),
  },
  { title: 'UserItem', ...closed },
)

export const AssistantItemSchema = Type.Object(
  {
    kind: Type.Literal('assistant'),
    ...itemBase,
    text: Type.String(),
    reasoning: Type.String(),
    streaming: Type.Boolean({ description: 'Chunks are arriving; the message that ends them is not logged yet.' }),
    error: optional(ErrorInfoSchema),
    interrupted: optional(Type.Boolean()),
  },
  { title: 'AssistantItem', ...closed },
)

export const PrintedOutputSchema = Type.Object(
  {
    text: Type.String({ description: 'As a terminal shows it.' }),
    raw: Type.String({ description: 'The bytes as printed (colours).' }),
    capped: Type.Boolean({ description: 'The live log stopped at its cap (the result holds the rest).' }),
  },
  {
    title: 'PrintedOutput',
    ...closed,
    description: 'What a call printed while it ran (`tool/output`), kept after its result and after a crash cut it.',
  },
)

export const FileSnapshotSchema = Type.Union(
  [
    Type.Object({ sha256: Type.String(), bytes: Type.Integer() }, { title: 'StoredFileSnapshot', ...closed }),
    Type.Object({ absent: Type.Literal(true) }, { title: 'AbsentFileSnapshot', ...closed }),
    Type.Object(
      { unrecorded: Type.String({ description: 'Why the content was not recorded.' }) },
      { title: 'UnrecordedFileSnapshot', ...closed },
    ),
  ],
  {
    title: 'FileSnapshot',
    description:
      "A file's recorded content at one moment (stored by sha256 in the session's checkpoint store), no file, or not recorded and why.",
  },
)

export const FileTouchSchema = Type.Object(
  {
    path: Type.String({
      description: "Relative to the session's workspace, `/`-separated, as the checkpoint logged it.",
    }),
    before: optional(FileSnapshotSchema),
    after: optional(FileSnapshotSchema),
  },
  { title: 'FileTouch', ...closed },
)

export const TOOL_STATUSES = ['pending', 'running', 'done', 'error', 'interrupted'] as const

export const ToolItemSchema = Type.Object(
  {
    kind: Type.Literal('tool'),
    ...itemBase,
    callId: Type.String(),
    name: Type.String(),
    args: Type.Any({
      description: "The call's arguments (the model's, or as a hook or the approver rewrote them: `editedBy`).",
    }),
    status: oneOf(TOOL_STATUSES, {
      title: 'ToolStatus',
      description:
        '`error`: the result carries an error, or a command ended unclean (`ending`); `interrupted`: the call was cut (cancel, a crash, a turn that ended without its result, a session nobody is running).',
    }),
    ending: optional(
      Type.String({
        description:
          'How a command ended when that was not a clean exit 0 (`exit 1`, `killed by SIGTERM`, `timed out`).',
      }),
    ),
    output: optional(Type.String({ description: "The result's text blocks, joined." })),
    content: optional(Type.Array(BlockSchema, { description: "The result's blocks as logged (text and images)." })),
    error: optional(ErrorInfoSchema),
    startedAt: Type.Integer(),
    endedAt: optional(Type.Integer()),
    approval: optional(ApprovalInfoSchema),
    change: optional(ProposedChangeSchema),
    changeState: optional(
      described(
        ChangeStateSchema,
        'Whether `change` happened: `proposed` until the result, `applied` on success, `refused` when the call failed or never ran, `unknown` when it was cut while running.',
      ),
    ),
    editedBy: optional(
      oneOf(['hook', 'approver'] as const, {
        description:
          "`args` are not the model's: a PreToolUse hook (`hook/updated-input`) or the approver (`tool/edited`) rewrote them.",
      }),
    ),
    pruned: optional(
      Type.Object(
        { seq: Type.Integer(), note: optional(Type.String()) },
        {
          title: 'PrunedMark',
          ...closed,
          description: 'The model now sees a shortened result (`tool/pruned`); the log and this card keep it whole.',
        },
      ),
    ),
    printed: optional(PrintedOutputSchema),
    shownBy: optional(
      Type.String({
        description:
          "The key of the item that shows this call instead: a `task` call that started a subagent is drawn as that child's `subagent` card, so a surface drawing that card draws no card for the call (ACP, which has no such card, keeps the call).",
      }),
    ),
    parentCallId: optional(
      Type.String({
        description:
          "A call a program made (code mode, `run_code`): the program's call, under which surfaces show this one; its result went to the program, not the model.",
      }),
    ),
    files: optional(
      Type.Array(FileTouchSchema, {
        description:
          'What the files this call touched held before and after it (`checkpoint/before` / `checkpoint/after`), in the order first seen; `before` of a later call in the same turn is what the last call left.',
      }),
    ),
  },
  { title: 'ToolItem', ...closed },
)

export const ApprovalItemSchema = Type.Object(
  { kind: Type.Literal('approval'), ...itemBase, approval: ApprovalInfoSchema },
  { title: 'ApprovalItem', ...closed },
)

export const NoticeItemSchema = Type.Object(
  {
    kind: Type.Literal('notice'),
    ...itemBase,
    text: Type.String(),
    tone: oneOf(['info', 'warn', 'muted'] as const, { title: 'NoticeTone' }),
    cause: NoticeCauseSchema,
    retry: optional(RetryInfoSchema),
    replaces: optional(
      Type.Object(
        { fromSeq: Type.Integer(), toSeq: Type.Integer() },
        {
          title: 'SeqRange',
          ...closed,
          description: 'A summary: the seq range of the history it replaces in what the model sees.',
        },
      ),
    ),
  },
  { title: 'NoticeItem', ...closed },
)

export const TurnEndItemSchema = Type.Object(
  {
    kind: Type.Literal('turn-end'),
    ...itemBase,
    reason: Type.String(),
    error: optional(
      described(ErrorInfoSchema, 'The error to show here: absent when the failed answer just above already shows it.'),
    ),
    loggedError: optional(described(ErrorInfoSchema, 'The error the `turn/end` logged, shown or not.')),
    usage: UsageSchema,
    startedAt: optional(Type.Integer()),
    endedAt: Type.Integer(),
  },
  { title: 'TurnEndItem', ...closed },
)

export const SubagentItemSchema = Type.Object(
  {
    kind: Type.Literal('subagent'),
    ...itemBase,
    childSessionId: Type.String({ description: "The child's own session: open it to see what the child did." }),
    description: Type.String(),
    agentType: Type.String(),
    via: Type.String({ description: 'How it was made: `spawn`, `fork` or `acp`.' }),
    ceiling: Type.String({ description: 'The most authority the child runs under.' }),
    status: oneOf(['running', 'completed', 'failed', 'aborted'] as const, { title: 'SubagentStatus' }),
    callId: optional(Type.String({ description: "The parent's call that started it." })),
    text: optional(Type.String({ description: "Its final text, as the parent's model was given it." })),
    error: optional(ErrorInfoSchema),
    turns: Type.Integer({ description: 'Turns it ran (a follow-up adds one).' }),
    startedAt: Type.Integer(),
    endedAt: optional(Type.Integer()),
  },
  {
    title: 'SubagentItem',
    ...closed,
    description:
      "A child agent this session started (`subagent/start` … `subagent/end`): a card linking the child's session.",
  },
)

export const ItemSchema = Type.Union(
  [
    UserItemSchema,
    AssistantItemSchema,
    ToolItemSchema,
    ApprovalItemSchema,
    NoticeItemSchema,
    TurnEndItemSchema,
    SubagentItemSchema,
  ],
  {
    title: 'Item',
    description:
      'What the conversation shows, one entry per message, tool card, approval, notice, turn end or child agent.',
  },
)

export const TodoEntrySchema = Type.Object(
  {
    content: Type.String(),
    status: oneOf(['pending', 'in_progress', 'completed'] as const, { title: 'TodoStatus' }),
    priority: oneOf(['high', 'medium', 'low'] as const, { title: 'TodoPriority' }),
  },
  {
    title: 'TodoEntry',
    ...closed,
    description: "One entry of the agent's task list (`todo/updated`), as ACP's plan entries have it too.",
  },
)

export type Usage = Static<typeof UsageSchema>
export type ErrorInfo = Static<typeof ErrorInfoSchema>
export type Block = Static<typeof BlockSchema>
export type ImageRef = Static<typeof ImageRefSchema>
export type ApprovalInfo = Static<typeof ApprovalInfoSchema>
export type ChangeState = Static<typeof ChangeStateSchema>
export type Replacement = Static<typeof ReplacementSchema>
export type ProposedChange = Static<typeof ProposedChangeSchema>
export type RetryInfo = Static<typeof RetryInfoSchema>
export type NoticeCause = Static<typeof NoticeCauseSchema>
export type UserItem = Static<typeof UserItemSchema>
export type AssistantItem = Static<typeof AssistantItemSchema>
export type PrintedOutput = Static<typeof PrintedOutputSchema>
export type ToolItem = Static<typeof ToolItemSchema>
export type FileSnapshot = Static<typeof FileSnapshotSchema>
export type FileTouch = Static<typeof FileTouchSchema>
export type ApprovalItem = Static<typeof ApprovalItemSchema>
export type NoticeItem = Static<typeof NoticeItemSchema>
export type TurnEndItem = Static<typeof TurnEndItemSchema>
export type SubagentItem = Static<typeof SubagentItemSchema>
export type Item = Static<typeof ItemSchema>
export type TodoEntry = Static<typeof TodoEntrySchema>
