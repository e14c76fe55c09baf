// `run_code`: the model writes a program and the session's tools are its functions (docs/architecture.md,
// "Code mode"; issue #30).
import { setMaxListeners } from 'node:events'
import type { Context } from '@dsh/cordis'
import type { BridgeReply, CodeRunResult } from '@dsh/code-runtime'
import Schema from '@dsh/schemastery'
import { defineTool, Type, type Static, type ToolContext, type ToolDefinition, type ToolOutput } from '@dsh/tools'
import { declarations } from './declarations.ts'
import { CallGate } from './gate.ts'

export { declarations, typeOf } from './declarations.ts'

export interface Config {
  defaultTimeoutMs: number
  maxTimeoutMs: number
  descriptionChars: number
}

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  defaultTimeoutMs: Schema.natural()
    .min(1)
    .default(30_000)
    .description("A program's wall time when the model gives none (ms; time waiting for its tool calls not counted)."),
  maxTimeoutMs: Schema.natural().min(1).default(300_000).description('Longest wall time the model may ask for (ms).'),
  descriptionChars: Schema.natural()
    .min(20)
    .default(400)
    .description("Characters of each tool's description kept in run_code's declarations."),
})

export const RUN_CODE = 'run_code'

/** The arguments, declared once: the model's JSON Schema, the validator's input and `execute`'s type. */
export const RunCodeArguments = Type.Object(
  {
    code: Type.String({
      minLength: 1,
      description:
        'TypeScript: the body of an async function (top-level await and return work). Call the declared functions, print with console.log, return a JSON value.',
    }),
    timeoutMs: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: "The program's wall time in ms (time spent in tool calls not counted).",
      }),
    ),
  },
  { additionalProperties: false },
)
export type RunCodeArgs = Static<typeof RunCodeArguments>

export const name = 'tool-run-code'
/**
 * Mounted per agent by the `code` agent preset (docs/architecture.md, "Agent presets"): it only registers
 * `run_code`, whose declarations are that agent's tools.
 */
export const mountsPerAgent = true
export const inject = ['tools', 'codeRuntime']

const GUIDE = `Run a TypeScript program in which the tools are async functions: use it for work of many steps (reading, searching, editing many files) in one call. Each call is a real tool call, checked, approved and logged like a direct one; a call that fails or is refused throws a ToolCallError ({ tool, code, message }) you may catch. The program has no file system, network, process, require, import() or timers of its own: only the functions below, console.log and its return value. Result: what it printed and its return value as JSON.`

/** The functions an agent's programs may call: what the agent may reach from a program, run_code aside. */
function programTools(ctx: Context, agentId: string): ToolDefinition[] {
  return ctx.tools.visible(agentId, 'program').filter((tool) => tool.name !== RUN_CODE)
}

const textOf = (content: { type: string; text?: string }[]) =>
  content.map((block) => (block.type === 'text' ? block.text : '[image: not readable from a program]')).join('\n')

export function apply(ctx: Context, config: Config) {
  const described = new Map<string, { key: string; text: string }>()
  const describe = (agentId: string) => {
    const tools = programTools(ctx, agentId)
    const key = JSON.stringify(tools.map((tool) => [tool.name, tool.description, tool.parameters]))
    const cached = described.get(agentId)
    if (cached?.key === key) return cached.text
    const text = `${GUIDE}\n\n\`\`\`ts\n${declarations(tools, config.descriptionChars)}\ndeclare class ToolCallError extends Error { tool: string; code: string }\n\`\`\``
    described.set(agentId, { key, text })
    return text
  }

  ctx.tools.register(
    ctx,
    defineTool({
      name: RUN_CODE,
      description: GUIDE,
      describe,
      parameters: RunCodeArguments,
      // The program's own wall time is the runtime's; its calls have their own deadlines and approvals.
      timeoutMs: 0,
      summarize: (args) => `run_code (${args.code.split('\n').length} lines)`,
      async execute(args, context) {
        const timeoutMs = Math.min(args.timeoutMs ?? config.defaultTimeoutMs, config.maxTimeoutMs)
        const tools = programTools(ctx, context.agentId)
        const result = await ctx.codeRuntime.run({
          code: args.code,
          tools: tools.map((tool) => tool.name),
          timeoutMs,
          signal: context.signal,
          call: childCaller(ctx, context),
        })
        return formatResult(result)
      },
    }),
  )
}

/** Each call of the program as a real call through the pipeline, logged with the program's call as its parent. */
function childCaller(ctx: Context, context: ToolContext) {
  const gate = new CallGate()
  const { callId, liveOutput: _live, signal: turn, ...base } = context
  // One signal for the program's calls (each call listens on it), so the turn's signal keeps one listener.
  const stop = new AbortController()
  setMaxListeners(0, stop.signal)
  const signal = stop.signal
  if (turn.aborted) stop.abort(turn.reason)
  else turn.addEventListener('abort', () => stop.abort(turn.reason), { once: true })
  let next = 0
  return async (name: string, argumentsJson: string): Promise<BridgeReply> => {
    const childId = `${callId}.${++next}`
    let args: unknown
    try {
      args = JSON.parse(argumentsJson)
    } catch {
      return { ok: false, code: 'INVALID_ARGS', message: `${name}: its arguments are not JSON` }
    }
    const exclusive = !ctx.tools.resolve(name, context.agentId, 'program')?.tool.concurrencySafe
    const [result] = await gate.run(exclusive, () =>
      ctx.tools.runCalls([{ callId: childId, name, arguments: args }], base, {
        signal,
        maxParallel: 1,
        parentCallId: callId,
      }),
    )
    if (!result) return { ok: false, code: 'TOOL_FAILED', message: `${name}: the call gave no result` }
    return result.error
      ? { ok: false, code: result.error.code, message: result.error.message }
      : { ok: true, text: textOf(result.content) }
  }
}

/** What the model reads: the output, then the value or the failure (with its line and column). */
export function formatResult(result: CodeRunResult): ToolOutput {
  const parts: string[] = []
  if (result.output) parts.push(result.output.replace(/\n$/, ''))
  if (result.outputDropped) parts.push(`[${result.outputDropped} characters of output dropped]`)
  const calls = `${result.toolCalls} tool call${result.toolCalls === 1 ? '' : 's'}, ${result.wallMs} ms`
  if (!result.error) {
    parts.push(result.value !== undefined ? `Returned: ${result.value}` : 'The program returned nothing.')
    parts.push(`(${calls})`)
    return parts.join('\n')
  }
  const where = result.error.position
    ? ` (at line ${result.error.position.line}, column ${result.error.position.column} of your code)`
    : ''
  const message = `${result.error.message}${where}`
  parts.push(`The program failed: ${message}`, `(${calls})`)
  return { content: [{ type: 'text', text: parts.join('\n') }], error: { code: result.error.code, message } }
}
