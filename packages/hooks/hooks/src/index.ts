// Hooks: user commands run at points of a session, in Claude Code's configuration shape (docs/extending.md#hooks).
import { type Context, Service } from '@dsh/cordis'
import { oneOf, Type, type Session, type Static } from '@dsh/session'

/** The events a hook may be configured for (`SubagentStop`: after a child agent's turn, in its parent's session). */
export const HOOK_EVENTS = [
  'SessionStart',
  'UserPromptSubmit',
  'PreToolUse',
  'PostToolUse',
  'Stop',
  'SubagentStop',
  'PreCompact',
] as const
export type HookEventName = (typeof HOOK_EVENTS)[number]

/** Where a hook was configured: the user's `$DSH_HOME/hooks.json`, or a workspace file (which needs approval). */
export const HOOK_ORIGINS = ['user', 'workspace'] as const
export type HookOrigin = (typeof HOOK_ORIGINS)[number]

/** One configured command hook. */
export interface HookCommand {
  event: HookEventName
  /** The group's matcher as written (a regex over tool names, anchored; absent, empty or `*`: everything). */
  matcher?: string
  command: string
  /** The hook's own deadline in seconds, as Claude Code writes it. */
  timeout?: number
  /** The file it came from (absolute). */
  file: string
  origin: HookOrigin
}

/**
 * What the hooks matching one event said, combined (deny > ask > allow; any block wins; the first
 * `updatedInput` in configuration order wins; every context is kept in order).
 */
export interface HookOutcome {
  /** Why the hooks block (exit 2's stderr, `decision: block`'s reason, a deny's reason). */
  blocked?: string
  permission?: 'allow' | 'ask' | 'deny'
  /** The reason that came with `permission`. */
  permissionReason?: string
  /** A replacement tool input, in the names the hook was shown (Claude Code's, where dsh maps them). */
  updatedInput?: Record<string, unknown>
  /** `additionalContext` (and plain stdout where Claude Code reads it as context), hook by hook. */
  context: string[]
  /** `continue: false`: the turn should stop, with this reason (`stopReason`). */
  stop?: string
  /** Hooks that could not be read or run so that the caller must not proceed (fail closed), named. */
  failures: string[]
}

/** One firing of an event: where it happens and the event's fields of the input JSON. */
export interface HookTrigger {
  session: Session
  agentId: string
  cwd: string
  signal: AbortSignal
  /** Names the matchers are tested on (a tool's dsh name and its Claude Code name); absent: every hook matches. */
  matchOn?: string[]
  /** The tool call the event is about, when there is one (logged with each run). */
  callId?: string
  /** The event's own fields of the input (`tool_name`, `tool_input`, `tool_response`, `prompt`, `source`, …). */
  fields: Record<string, unknown>
}

/** A hook's verdict as logged: how its exit code and stdout were read. */
export const HOOK_DECISIONS = ['pass', 'block', 'allow', 'ask', 'deny', 'context', 'stop', 'error'] as const
export type HookDecision = (typeof HOOK_DECISIONS)[number]

/** One invocation, as the `hook/run` event records it (so a replayed session is explained by its log). */
export const HookRunSchema = Type.Object({
  event: oneOf(HOOK_EVENTS),
  command: Type.String(),
  file: Type.String(),
  origin: oneOf(HOOK_ORIGINS),
  matcher: Type.Optional(Type.String()),
  callId: Type.Optional(Type.String()),
  /** `sha256:<hex>` of the JSON written to the hook's stdin. */
  inputDigest: Type.String(),
  exitCode: Type.Union([Type.Number(), Type.Null()]),
  timedOut: Type.Boolean(),
  durationMs: Type.Number(),
  /** Redacted and capped. */
  stdout: Type.String(),
  stderr: Type.String(),
  decision: oneOf(HOOK_DECISIONS),
  reason: Type.Optional(Type.String()),
  updatedInput: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
})
export type HookRunData = Static<typeof HookRunSchema>

/** A PreToolUse hook rewrote a call's input: these arguments (dsh's names) are what ran. */
export const HookUpdatedInputSchema = Type.Object({
  callId: Type.String(),
  arguments: Type.Record(Type.String(), Type.Unknown()),
  file: Type.String(),
})

/**
 * Claude Code's names for dsh's tools, and the argument names that differ (`file_path` for dsh's `path`;
 * Grep's `-i` and `-C`). A tool not listed keeps its dsh name and arguments. `MultiEdit` has no dsh tool:
 * a matcher naming it matches `edit`.
 */
export const CLAUDE_CODE_TOOLS: Record<string, { name: string; arguments: Record<string, string> }> = {
  bash: { name: 'Bash', arguments: {} },
  edit: { name: 'Edit', arguments: { path: 'file_path' } },
  write: { name: 'Write', arguments: { path: 'file_path' } },
  read: { name: 'Read', arguments: { path: 'file_path' } },
  glob: { name: 'Glob', arguments: {} },
  grep: { name: 'Grep', arguments: { ignore_case: '-i', context: '-C' } },
}

/** Claude Code tool names a matcher may use for a dsh tool besides its own name. */
export const CLAUDE_CODE_ALIASES: Record<string, string[]> = { edit: ['Edit', 'MultiEdit'] }

declare module '@dsh/session' {
  interface SessionEventMap {
    /** One hook command ran: what it was given (digest), what it said, and how dsh read it. */
    'hook/run': HookRunData
    'hook/updated-input': Static<typeof HookUpdatedInputSchema>
  }
}

declare module '@dsh/cordis' {
  interface Context {
    hooks: Hooks
  }
}

/**
 * Runs the hooks configured for an event (docs/security.md: they are processes dsh starts, so they run under the
 * session's environment policy and sandbox). Owns: reading the hooks files, which hooks match, running them,
 * reading their answers, the `hook/run` kind and the approval of a workspace's hooks. Must not own: what a
 * caller does with the outcome beyond its own listeners, or any authority (a hook's `allow` never widens it).
 */
export abstract class Hooks extends Service {
  constructor(ctx: Context) {
    super(ctx, 'hooks')
  }

  /** Runs every hook matching `event` for `trigger` (each logged as `hook/run`) and combines what they said. */
  abstract fire(event: HookEventName, trigger: HookTrigger): Promise<HookOutcome>
}
