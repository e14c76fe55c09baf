import type { Context } from '@dsh/cordis'
import type { SandboxAuthority } from '@dsh/sandbox'
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
import { defineTool, stoppedByDsh, Type, type Static, type ToolContext } from '@dsh/tools'
import { formatResult } from './format.ts'
import { withWritableGit, writeGitReason } from './git.ts'
import { contributeShellSection } from './prompt.ts'

export type { BashArgs }

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
    .description('Time past the longest deadline the tool pipeline waits for the shell to kill and report (ms).'),
})

export const name = 'tool-bash'
export const inject = ['tools', 'shell', 'sandboxPolicy', 'fs']

/**
 * The tool's parameters: the shape tool-kit shares with tool-bash-persistent (the words are this tool's),
 * plus `writeGit`, which only this tool has.
 */
function parameters(config: Config) {
  const shared = bashArguments(
    {
      command: 'The bash command line.',
      workdir: 'Directory to run in, relative to the workspace (default: the workspace).',
      timeout: `Deadline in ms (default ${config.defaultTimeoutMs}, at most ${config.maxTimeoutMs}); the command and all it started are killed at it.`,
      sandbox: 'false: run outside the sandbox with full access, after the user approves. Needs `justification`.',
    },
    config.maxTimeoutMs,
  )
  return Type.Object(
    {
      ...shared.properties,
      writeGit: Type.Optional(
        Type.Boolean({
          description:
            'true: run with .git writable (it is read-only in the sandbox, so `git commit`, `git branch`, … fail without it), after the user approves. Needs `justification`.',
        }),
      ),
      justification: Type.Optional(
        Type.String({
          description: 'Why the command must run outside the sandbox, or with .git writable (shown to the user).',
        }),
      ),
    },
    { additionalProperties: false },
  )
}

/** The one-shot tool's arguments: the shared ones, and `writeGit` (this tool only). */
export type OneShotBashArgs = Static<ReturnType<typeof parameters>>

/** The authority of this call: the session's, or full access when the call was approved to run unconfined. */
async function callAuthority(
  ctx: Context,
  args: OneShotBashArgs,
  context: ToolContext,
  cwd: string,
): Promise<SandboxAuthority> {
  const authority = await ctx.sandboxPolicy.authority(context.session)
  if (args.sandbox === false) return { mode: 'danger-full-access', writableRoots: authority.writableRoots }
  return args.writeGit ? withWritableGit(authority, cwd) : authority
}

/**
 * The one-shot `bash` tool (docs/architecture.md, "Layers"; docs/security.md): each call is a fresh `bash -c` through ctx.shell, under the
 * authority ctx.sandboxPolicy derives from the session log. A call may ask to run unconfined, or with `.git`
 * writable; it then needs approval and gets that for the one call only.
 */
export function apply(ctx: Context, config: Config) {
  contributeShellSection(ctx)
  ctx.tools.register(
    ctx,
    defineTool({
      name: 'bash',
      description: [
        'Run a bash command in the workspace; returns its output (stdout and stderr together) and exit code. Each call is a new shell (cd and variables do not carry over: use workdir, or cd dir && cmd). Writes are confined by the sandbox mode; .git and agent/editor config folders are read-only and secret paths (~/.ssh, credentials) are hidden. To commit or otherwise change .git, pass writeGit: true with a justification (the user approves). Long output keeps its head and tail.',
        BASH_GUIDANCE,
      ].join('\n'),
      parameters: parameters(config),
      timeoutMs: config.maxTimeoutMs + config.pipelineGraceMs,
      summarize: (args: OneShotBashArgs) =>
        `${summarizeBash(args)}${args.writeGit && args.sandbox !== false ? ' [.git writable]' : ''}`,
      needsApproval: (args: OneShotBashArgs, context) => unconfinedReason(ctx, args, context) ?? writeGitReason(args),
      async execute(args: OneShotBashArgs, context) {
        const cwd = await workingDirectory(ctx, context.cwd, args.workdir)
        const authority = await callAuthority(ctx, args, context, context.cwd)
        if (args.run_in_background) return startInBackground(ctx, args.command, context, cwd, authority)
        const timeoutMs = args.timeout ?? config.defaultTimeoutMs
        const result = await ctx.shell
          .run(args.command, {
            cwd,
            timeoutMs,
            signal: context.signal,
            authority,
            fullOutputPath: fullOutputPath(ctx, context),
            ...liveOutput(context),
          })
          .catch((error) => Promise.reject(refusal(error)))
        return formatResult(result, {
          timeoutMs,
          unconfined: args.sandbox === false,
          writableGit: args.writeGit === true && args.sandbox !== false,
          stopped: stoppedByDsh(context.signal),
        })
      },
    }),
  )
}
