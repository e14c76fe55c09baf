import { type Context, Service } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type { ToolSchema } from '@dsh/llm'
import type { ValidateFunction } from 'ajv'
import { runBatch, type BatchOptions } from './pipeline.ts'
import { toSchema, type ToolCallRequest, type ToolContext, type ToolDefinition, type ToolResultData } from './types.ts'
import { compileParameters } from './validate.ts'
import { contributeToolUseSection } from './prompt.ts'
import { ToolEditedSchema } from './events.ts'
import { ToolOutputSchema } from './live-output.ts'

declare module '@dsh/cordis' {
  interface Context {
    tools: Tools
  }
}

export interface Config {
  timeoutMs: number
  abortGraceMs: number
  maxOutputChars: number
  liveOutputChunkChars: number
  liveOutputIntervalMs: number
  liveOutputMaxChars: number
  maxArgumentBytes: number
}

/**
 * How a call reaches a tool: `direct` (the model calls it; the request lists it) or `program` (a program of
 * the model's, `run_code`, calls it: docs/architecture.md "Code mode").
 */
export type ToolReach = 'direct' | 'program'

/** Whether the agent `agentId` may see and call the tool `name` when it reaches it this way. */
export type ToolFilter = (agentId: string, name: string, reach: ToolReach) => boolean

interface Registered {
  tool: ToolDefinition
  /** Compiled on first use: compiling every schema at boot costs start-up time for tools never called. */
  validate: ValidateFunction | undefined
  /** Visible to this agent only; undefined: to every agent. */
  agentId?: string
}

/**
 * The tool registry and pipeline (D+P; docs/architecture.md, "Tools"). Owns: which tools each agent sees,
 * argument validation, the guarded pipeline of docs/architecture.md, "Agents and the turn" with results in model order. Must not own: what any
 * tool does, or the approval policy (ctx.approval) and sandbox mode (the authority seam).
 */
export class Tools extends Service {
  static inject = ['sessions']
  static Config: Schema<Config> = Schema.object({
    timeoutMs: Schema.natural()
      .default(600_000)
      .description('Default deadline of one tool call (a tool may set its own).'),
    abortGraceMs: Schema.natural()
      .default(5_000)
      .description('How long a stopped call may take to return before its result is recorded as ABORTED without it.'),
    maxOutputChars: Schema.natural()
      .default(200_000)
      .description('A result longer than this is cut (head and tail kept, with a note) before it is logged.'),
    liveOutputChunkChars: Schema.natural()
      .min(1)
      .default(4_096)
      .description(
        "A running call's printed output is logged as `tool/output` once this many characters wait (or at the interval).",
      ),
    liveOutputIntervalMs: Schema.natural()
      .min(1)
      .default(200)
      .description(
        'Longest printed output waits before it is logged as `tool/output` (ms); what waits is what a crash can lose.',
      ),
    liveOutputMaxChars: Schema.natural()
      .default(1_000_000)
      .description(
        'Characters of printed output logged per call (`tool/output`); past it the rest is left to the result and its spill file. 0: no live output.',
      ),
    maxArgumentBytes: Schema.natural()
      .min(1)
      .default(1024 * 1024)
      .description(
        'A call whose arguments (as JSON) are larger than this many bytes is refused before it runs, with a message telling the model to send the content in parts: one huge argument would otherwise ride in every later request.',
      ),
  })

  private readonly registered = new Map<string, Registered[]>()
  private readonly filters = new Set<ToolFilter>()

  constructor(
    ctx: Context,
    readonly config: Config,
  ) {
    super(ctx, 'tools')
    ctx.sessions.defineKind(ctx, 'tool/output', { ignorable: true, schema: ToolOutputSchema })
    contributeToolUseSection(ctx)
    ctx.sessions.defineKind(ctx, 'tool/edited', { schema: ToolEditedSchema })
  }

  /**
   * Registers a tool for as long as `ctx` lives. With `agentId`, only that agent sees it (register it in the
   * agent's scope). A name may be registered once per visibility; an agent-scoped tool shadows a global one.
   */
  register(ctx: Context, tool: ToolDefinition, options: { agentId?: string } = {}): void {
    if (!tool.parameters || typeof tool.parameters !== 'object' || (tool.parameters as any).type !== 'object') {
      throw new Error(`tool "${tool.name}" must declare its parameters as a JSON Schema of type "object"`)
    }
    const entry: Registered = { tool, validate: undefined, agentId: options.agentId }
    ctx.effect(() => {
      const list = this.registered.get(tool.name) ?? []
      if (list.some((other) => other.agentId === entry.agentId)) {
        throw new Error(
          `tool "${tool.name}" is already registered${entry.agentId ? ` for agent ${entry.agentId}` : ''}`,
        )
      }
      list.push(entry)
      this.registered.set(tool.name, list)
      return () => {
        list.splice(list.indexOf(entry), 1)
        if (!list.length) this.registered.delete(tool.name)
      }
    }, `tool ${tool.name}`)
  }

  /**
   * Narrows what agents see for as long as `ctx` lives (an agent preset): a tool any filter refuses is left out
   * of that agent's request and, called anyway, is an unknown tool, so the list sent and the list run agree.
   */
  useFilter(ctx: Context, filter: ToolFilter): void {
    ctx.effect(() => {
      this.filters.add(filter)
      return () => this.filters.delete(filter)
    }, 'tool filter')
  }

  /**
   * Throws, naming the tool, when `parameters` is no JSON Schema of type "object" or does not compile: lets a
   * caller refuse a tool someone else declared (an SDK client's) before anything is registered.
   */
  checkParameters(name: string, parameters: Record<string, unknown>): void {
    if (parameters.type !== 'object')
      throw new Error(`tool "${name}" must declare its parameters as a JSON Schema of type "object"`)
    compileParameters(name, parameters)
  }

  /** The tool an agent would get for `name`, reached `reach` (default: the model calls it). */
  resolve(
    name: string,
    agentId: string,
    reach: ToolReach = 'direct',
  ): { tool: ToolDefinition; validate: ValidateFunction } | undefined {
    for (const filter of this.filters) if (!filter(agentId, name, reach)) return undefined
    const list = this.registered.get(name)
    if (!list) return undefined
    const entry =
      list.find((candidate) => candidate.agentId === agentId) ??
      list.find((candidate) => candidate.agentId === undefined)
    if (!entry) return undefined
    entry.validate ??= compileParameters(entry.tool.name, entry.tool.parameters)
    return { tool: entry.tool, validate: entry.validate }
  }

  /** Tools visible to an agent, sorted by name (a stable order keeps the request prefix cacheable). */
  visible(agentId: string, reach: ToolReach = 'direct'): ToolDefinition[] {
    return [...this.registered.keys()].sort().flatMap((name) => {
      const found = this.resolve(name, agentId, reach)
      return found ? [found.tool] : []
    })
  }

  schemas(agentId: string): ToolSchema[] {
    return this.visible(agentId).map((tool) => toSchema(tool, agentId))
  }

  /**
   * Runs the tool calls of one model response through the pipeline, appending `tool/call`, `tool/dispatched`
   * and `tool/result` events in model order; safe calls run in parallel up to `maxParallel`.
   */
  runCalls(
    calls: ToolCallRequest[],
    context: Omit<ToolContext, 'callId' | 'signal'>,
    options: BatchOptions,
  ): Promise<ToolResultData[]> {
    return runBatch(this, this.ctx, calls, context, options)
  }
}
