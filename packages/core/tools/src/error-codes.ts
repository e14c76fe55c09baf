// Every code a tool result's error may carry (docs/architecture.md, "Agents and the turn"). Closed on purpose: the model and the surfaces
// branch on these, so a new failure is added here, where it is named once, not invented inside a tool.
// The fs, sandbox, shell and subprocess codes are repeated (this core package depends on none of them):
// a tool passing an `FsError`'s code on compiles only while every `FsErrorCode` is listed here.

export const TOOL_ERROR_CODES = [
  // The pipeline (@dsh/tools).
  'UNKNOWN_TOOL',
  'INVALID_ARGS',
  'TOOL_TIMEOUT',
  'ABORTED_BEFORE_DISPATCH',
  'ABORTED',
  'DENIED',
  'APPROVAL_REJECTED',
  'TOOL_FAILED',
  // The bash tools (tool-bash, tool-bash-persistent, @dsh/tool-kit).
  'BAD_WORKDIR',
  'COMMAND_TIMEOUT',
  // A command that could not be run (`refusal` of @dsh/tool-kit): SandboxErrorCode, ShellErrorCode, SubprocessErrorCode.
  'SANDBOX_UNAVAILABLE',
  'SANDBOX_INVALID_AUTHORITY',
  'SESSION_CLOSED',
  'SESSION_FAILED',
  'TIMEOUT',
  'SPAWN_FAILED',
  // Background jobs (JobsErrorCode of @dsh/jobs: tool-jobs, the bash tools' run_in_background).
  'JOB_NOT_FOUND',
  'JOBS_LIMIT',
  // The file tools (tool-fs, tool-str-replace-editor).
  'EDIT_NOT_FOUND',
  'EDIT_NOT_UNIQUE',
  'EDIT_EMPTY_OLD_STRING',
  'EDIT_NO_CHANGE',
  'EDITOR_FILE_EXISTS',
  'EDITOR_NOT_FOUND',
  'EDITOR_NOT_UNIQUE',
  'EDITOR_NOTHING_TO_UNDO',
  // The search tools (tool-fs-search).
  'SEARCH_FAILED',
  'SEARCH_TIMEOUT',
  // The skill tool (tool-skill, SkillError of @dsh/skill).
  'SKILL_NOT_FOUND',
  'SKILL_PATH_OUTSIDE',
  // The memory tool (tool-memory, MemoryError of @dsh/memory): the memory file has no room for the entry.
  'MEMORY_FULL',
  // MCP tools (@dsh/mcp-client): the server reported an error, or it could not be reached (crashed, did not start).
  'MCP_TOOL_ERROR',
  'MCP_SERVER_FAILED',
  // Language servers (LspErrorCode of @dsh/lsp: tool-lsp).
  'LSP_NO_SERVER',
  'LSP_UNAVAILABLE',
  'LSP_FAILED',
  'LSP_TIMEOUT',
  // The subagent tool (tool-subagent): a child that failed or was stopped, an unknown child or agent type.
  'SUBAGENT_FAILED',
  'SUBAGENT_ABORTED',
  'SUBAGENT_NOT_FOUND',
  // Code mode (tool-run-code, CodeErrorCode of @dsh/code-runtime): the program did not parse, threw, ran past its
  // wall time or memory, made more tool calls than allowed, or its worker died.
  'CODE_SYNTAX',
  'CODE_THROWN',
  'CODE_TIMEOUT',
  'CODE_MEMORY',
  'CODE_LIMIT',
  'CODE_CRASHED',
  // fs errors surfaced as tool errors (FsErrorCode of @dsh/fs).
  'FS_SANDBOX_DENIED',
  'FS_READ_DENIED',
  'FS_PROTECTED',
  'FS_NOT_FOUND',
  'FS_IS_DIRECTORY',
  'FS_NOT_A_DIRECTORY',
  'FS_NOT_A_FILE',
  'FS_TOO_LARGE',
  'FS_BINARY',
  'FS_EXISTS',
  'FS_NOT_EMPTY',
  'FS_CHANGED',
  'FS_INVALID_PATH',
  'FS_INVALID_ARGUMENT',
  'FS_PERMISSION',
  'FS_IO',
] as const

/** Typed tool failures returned to the model as error results. A code not listed here is a type error. */
export type ToolErrorCode = (typeof TOOL_ERROR_CODES)[number]

const KNOWN: ReadonlySet<string> = new Set(TOOL_ERROR_CODES)

/** Whether `code` is a listed ToolErrorCode (for a code read off an error of unknown origin). */
export const isToolErrorCode = (code: unknown): code is ToolErrorCode => typeof code === 'string' && KNOWN.has(code)
