import type { Context } from '@dsh/cordis'
import type { SandboxAuthority } from '@dsh/sandbox'
import type {} from '@dsh/sandbox-policy'
import Schema from '@dsh/schemastery'
import type {} from '@dsh/shell'
import { bashArguments, refusal, summarizeBash, unconfinedReason, workingDirectory, type BashArgs } from '@dsh/tool-kit'
import { defineTool, type ToolContext } from '@dsh/tools'
import { formatResult } from './format.ts'

export type { BashArgs }

export interface Config {
  defaultTimeoutMs: number
  maxTimeoutMs: number
  pipelineGraceMs: number
}

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  defaultTimeoutMs: Schema.natural().min(1).default(120_000).description('Deadline of a command when the model gives none (ms).'),
  maxTimeoutMs: Schema.natural().min(1).default(600_000).description('Longest deadline the model may ask for (ms).'),
  pipelineGraceMs: Schema.natural().default(15_000).description('Time past the longest deadline the tool pipeline waits for the shell to kill and report (ms).'),
})

export const name = 'tool-bash'
export const inject = ['tools', 'shell', 'sandboxPolicy', 'fs']

/** The tool's parameters (the shape is tool-kit's, shared with tool-bash-persistent; the words are this tool's). */
function parameters(config: Config) {
  return bashArguments(
    {
      command: 'The bash command line.',
      workdir: 'Directory to run in, relative to the workspace (default: the workspace).',
      timeout: `Deadline in ms (default ${config.defaultTimeoutMs}, at most ${config.maxTimeoutMs}); the command and all it started are killed at it.`,
      sandbox: 'false: run outside the sandbox with full access, after the user approves. Needs `justification`.',
    },
    config.maxTimeoutMs,
  )
}

/** The authority of this call: the session's, or full access when the call was approved to run unconfined. */
async function callAuthority(ctx: Context, args: BashArgs, context: ToolContext): Promise<SandboxAuthority> {
  const authority = await ctx.sandboxPolicy.authority(context.session)
  return args.sandbox === false ? { mode: 'danger-full-access', writableRoots: authority.writableRoots } : authority
}

/**
 * The one-shot `bash` tool (DESIGN §4, §8): each call is a fresh `bash -c` through ctx.shell, under the
 * authority ctx.sandboxPolicy derives from the session log. A call may ask to run unconfined; it then needs
 * approval and gets full access for that call only.
 */
export function apply(ctx: Context, config: Config) {
  ctx.tools.register(ctx, defineTool({
    name: 'bash',
    description: 'Run a bash command in the workspace; returns its output (stdout and stderr together) and exit code. Each call is a new shell (cd and variables do not carry over). Writes are confined by the sandbox mode. Long output keeps its head and tail.',
    parameters: parameters(config),
    timeoutMs: config.maxTimeoutMs + config.pipelineGraceMs,
    summarize: summarizeBash,
    needsApproval: (args: BashArgs, context) => unconfinedReason(ctx, args, context),
    async execute(args: BashArgs, context) {
      const authority = await callAuthority(ctx, args, context)
      const cwd = await workingDirectory(ctx, context.cwd, args.workdir)
      const timeoutMs = args.timeout ?? config.defaultTimeoutMs
      const result = await ctx.shell.run(args.command, { cwd, timeoutMs, signal: context.signal, authority }).catch((error) => Promise.reject(refusal(error)))
      return formatResult(result, { timeoutMs, unconfined: args.sandbox === false })
    },
  }))
}
