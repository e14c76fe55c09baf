import type { Context } from '@dsh/cordis'
import type {} from '@dsh/sandbox-policy'
import Schema from '@dsh/schemastery'
import type {} from '@dsh/shell'
import {
  BASH_GUIDANCE,
  bashArguments,
  fullOutputPath,
  liveOutput,
  refusal,
  startInBackground,
  summarizeBash,
  unconfinedReason,
  workingDirectory,
  type BashArgs,
} from '@dsh/tool-kit'
import { defineTool, type ToolContext } from '@dsh/tools'
import { formatResult, shellQuote } from './format.ts'

export type { BashArgs }
import { AgentShells } from './shells.ts'
import { contributeShellSection } from './prompt.ts'

export interface Config {
  defaultTimeoutMs: number
  maxTimeoutMs: number
  pipelineGraceMs: number
}

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  defaultTimeoutMs: Schema.natural()
    .min(1)
    .default(120_000)
    .description('Deadline of a command when the model gives none (ms).'),
  maxTimeoutMs: Schema.natural().min(1).default(600_000).description('Longest deadline the model may ask for (ms).'),
  pipelineGraceMs: Schema.natural()
    .default(15_000)
    .description('Time past the longest deadline the tool pipeline waits for the shell to interrupt and report (ms).'),
})

export const name = 'tool-bash-persistent'
/**
 * May be mounted for one agent (an agent preset's `plugins`, docs/architecture.md "Agent presets"): it only
 * registers `bash` and its prompt section, which the agent's scope makes the agent's own, and its shells
 * already live in the agent's scope.
 */
export const mountsPerAgent = true
export const inject = ['tools', 'shell', 'sandboxPolicy', 'fs']

/**
 * The `bash` tool backed by one persistent shell per agent (docs/architecture.md, "Layers"): `cd`, exported variables and
 * functions carry over between calls. Mounted instead of tool-bash by a patch (same tool name). The shell
 * runs under the authority in force when it opened; when the session's mode changes, the next call gets a
 * new shell. A call approved to run outside the sandbox runs once, unconfined, in the shell's directory.
 */
export function apply(ctx: Context, config: Config) {
  contributeShellSection(ctx)
  const shells = new AgentShells(ctx)

  const runUnconfined = async (args: BashArgs, context: ToolContext, timeoutMs: number) => {
    const { writableRoots } = await ctx.sandboxPolicy.authority(context.session)
    const cwd = await workingDirectory(ctx, shells.cwd(context.agentId) ?? context.cwd, args.workdir ?? '.')
    const result = await ctx.shell.run(args.command, {
      cwd,
      timeoutMs,
      signal: context.signal,
      authority: { mode: 'danger-full-access', writableRoots },
      fullOutputPath: fullOutputPath(ctx, context),
      ...liveOutput(context),
    })
    return formatResult(result, { timeoutMs, unconfined: true, before: [] })
  }

  // A background job is a fresh `bash -c` of ctx.jobs, started in the persistent shell's directory.
  const inBackground = async (args: BashArgs, context: ToolContext) => {
    const authority = await ctx.sandboxPolicy.authority(context.session)
    const cwd = await workingDirectory(ctx, shells.cwd(context.agentId) ?? context.cwd, args.workdir ?? '.')
    const callAuthority =
      args.sandbox === false
        ? { mode: 'danger-full-access' as const, writableRoots: authority.writableRoots }
        : authority
    return startInBackground(ctx, args.command, context, cwd, callAuthority)
  }

  ctx.tools.register(
    ctx,
    defineTool({
      name: 'bash',
      description: [
        'Run a bash command in your persistent shell; returns its output (stdout and stderr together) and exit code. cd, exported variables and functions carry over between calls. Writes are confined by the sandbox mode. Long output keeps its head and tail.',
        BASH_GUIDANCE,
      ].join('\n'),
      parameters: bashArguments(
        {
          command: 'The bash command line, run in the shell itself.',
          workdir: "Directory to cd into first (relative to the shell's directory); the shell stays there.",
          timeout: `Deadline in ms (default ${config.defaultTimeoutMs}, at most ${config.maxTimeoutMs}); the command is interrupted at it.`,
          sandbox:
            'false: run this command once outside the sandbox with full access, after the user approves. Needs `justification`.',
        },
        config.maxTimeoutMs,
      ),
      timeoutMs: config.maxTimeoutMs + config.pipelineGraceMs,
      summarize: summarizeBash,
      needsApproval: (args: BashArgs, context) => unconfinedReason(ctx, args, context),
      async execute(args: BashArgs, context) {
        const timeoutMs = args.timeout ?? config.defaultTimeoutMs
        try {
          if (args.run_in_background) return await inBackground(args, context)
          if (args.sandbox === false) return await runUnconfined(args, context, timeoutMs)
          const authority = await ctx.sandboxPolicy.authority(context.session)
          const { shell, notes } = await shells.get(context, authority)
          // A group in the shell itself, so that `cd`, variables and functions of the command persist.
          const command = args.workdir
            ? `cd -- ${shellQuote(await workingDirectory(ctx, shell.cwd(), args.workdir))} && {\n${args.command}\n}`
            : args.command
          const result = await shell.run(command, {
            timeoutMs,
            signal: context.signal,
            fullOutputPath: fullOutputPath(ctx, context),
            ...liveOutput(context),
          })
          return formatResult(result, { timeoutMs, unconfined: false, before: notes })
        } catch (error) {
          throw refusal(error)
        }
      },
    }),
  )
}
