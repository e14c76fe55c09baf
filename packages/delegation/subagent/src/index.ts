// Subagents: delegation to a child agent (docs/architecture.md, "Subagents"; issue #16).
import { type Context, Service } from '@dsh/cordis'
import type { Agent } from '@dsh/agent'
import { SANDBOX_MODES, type SandboxMode } from '@dsh/sandbox'
import { ErrorSchema, oneOf, Type, type Static } from '@dsh/session'

/** How a child came to be: a fresh session, a fork of the parent's history, or a turn in an ACP agent. */
export const SUBAGENT_KINDS = ['spawn', 'fork', 'acp'] as const
export type SubagentKind = (typeof SUBAGENT_KINDS)[number]

export const SUBAGENT_STATUSES = ['completed', 'failed', 'aborted'] as const
/** How a child's turn ended, as its parent sees it. */
export type SubagentStatus = (typeof SUBAGENT_STATUSES)[number]

/** A kind of child: what it is for, which tools it may use, which model and how much authority at most. */
export interface AgentType {
  name: string
  description: string
  /** The tool names it is offered and may call; undefined: every tool its parent has. */
  tools?: string[]
  /** A model of the parent's provider; undefined: the parent's route. */
  model?: string
  /** The most authority this type ever runs under (below the parent's and the configured ceiling). */
  ceiling?: SandboxMode
  /** The type's instructions, given to the child before its task. */
  instructions: string
  /** Where it was defined: `built-in` or a file path. */
  source: string
}

/** One delegation as the parent's tool asks for it. */
export interface SubagentRequest {
  /** Three to five words for people (cards, the parent's log). */
  description: string
  /** The whole task for the child. */
  prompt: string
  /** An agent type name (default `general`). */
  agentType?: string
  /** A model of the parent's provider, over the type's. */
  model?: string
  /** The parent's tool call that asked for it (the fork point, the log link). */
  callId?: string
}

// Each subagent kind's type and its check are one TypeBox schema (issue #28.6).
const sessionId = Type.String({ minLength: 1 })

/** In the parent: a child started (its session id names its log). */
export const SubagentStartData = Type.Object({
  childSessionId: sessionId,
  kind: oneOf(SUBAGENT_KINDS),
  agentType: Type.String(),
  description: Type.String(),
  ceiling: oneOf(SANDBOX_MODES),
  callId: Type.Optional(Type.String()),
  followup: Type.Optional(Type.Literal(true)),
})

/** In the parent: a child's turn ended; `text` is what the parent's model was given (a typed failure in `error`). */
export const SubagentEndData = Type.Object({
  childSessionId: sessionId,
  status: oneOf(SUBAGENT_STATUSES),
  text: Type.String(),
  error: Type.Optional(ErrorSchema),
})

/**
 * In the child, before its first turn: whose child it is, how deep (1: a child of a top-level session) and,
 * when its type restricts them, the only tools it is offered and may call.
 */
export const SubagentParentData = Type.Object({
  parentSessionId: sessionId,
  kind: oneOf(SUBAGENT_KINDS),
  agentType: Type.String(),
  description: Type.String(),
  depth: Type.Integer({ minimum: 1 }),
  callId: Type.Optional(Type.String()),
  tools: Type.Optional(Type.Array(Type.String())),
})

/** What the parent is told: the child's final text, or a typed failure (as `subagent/end` logs it). */
export type SubagentResult = Static<typeof SubagentEndData>

declare module '@dsh/session' {
  interface SessionEventMap {
    'subagent/start': Static<typeof SubagentStartData>
    'subagent/end': Static<typeof SubagentEndData>
    'subagent/parent': Static<typeof SubagentParentData>
  }
}

declare module '@dsh/cordis' {
  interface Context {
    subagents: Subagents
  }
  interface Events {
    /** @mode serial — a child's turn ended and its result is about to reach the parent (a `SubagentStop` hook). */
    'subagent/stopped'(parent: Agent, result: SubagentResult): Promise<void>
  }
}

/**
 * Child agents for a parent (docs/architecture.md, "Agents and the turn"; docs/security.md). Owns: starting a child on a session of its own linked both
 * ways, running its turn, continuing it, the ceiling it runs under, and the agent types. Must not own: the
 * model-facing tool (tool-subagent) or how a turn runs (ctx.agentLoop).
 */
export abstract class Subagents extends Service {
  constructor(ctx: Context) {
    super(ctx, 'subagents')
  }
  /** Runs a new child's turn to its end. Never throws for the child's sake: a failure is a typed result. */
  abstract run(parent: Agent, request: SubagentRequest, signal: AbortSignal): Promise<SubagentResult>
  /** Sends one of `parent`'s children a follow-up and runs that turn to its end. */
  abstract continue(
    parent: Agent,
    childSessionId: string,
    message: string,
    signal: AbortSignal,
  ): Promise<SubagentResult>
  /** The agent types known in `cwd` (built-ins, then `.dsh/agents` and `.claude/agents`). */
  abstract types(cwd: string): Promise<AgentType[]>
}

/** A request the service refuses before any child exists (unknown type, unknown child, limits). */
export class SubagentError extends Error {
  override name = 'SubagentError'
  constructor(
    readonly code: 'SUBAGENT_NOT_FOUND' | 'SUBAGENT_FAILED',
    message: string,
  ) {
    super(message)
  }
}
