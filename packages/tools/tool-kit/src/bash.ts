import { resolve } from 'node:path'
import type { Context } from '@dsh/cordis'
import { FsError } from '@dsh/fs'
import { SandboxError } from '@dsh/sandbox'
import type {} from '@dsh/sandbox-policy'
import { isToolErrorCode, ToolError, Type, type Static, type ToolContext } from '@dsh/tools'

// What the two `bash` tools share (tool-bash: a fresh shell per call; tool-bash-persistent: one shell per
// agent): their arguments, when a call must be approved to leave the sandbox, the workdir check, and how a
// command that could not run is told to the model. How each describes itself stays its own.

/** How one `bash` tool describes each argument to the model (the shape is shared, the words are the tool's). */
export interface BashArgumentWords {
  command: string
  workdir: string
  timeout: string
  sandbox: string
}

/** The arguments of both `bash` tools, declared once: the JSON Schema the model sees, the validator and `BashArgs`. */
export function bashArguments(words: BashArgumentWords, maxTimeoutMs: number) {
  return Type.Object(
    {
      command: Type.String({ description: words.command }),
      description: Type.Optional(Type.String({ description: 'What it does, in a few words (shown to the user).' })),
      workdir: Type.Optional(Type.String({ description: words.workdir })),
      timeout: Type.Optional(Type.Integer({ minimum: 1, maximum: maxTimeoutMs, description: words.timeout })),
      sandbox: Type.Optional(Type.Boolean({ description: words.sandbox })),
      justification: Type.Optional(
        Type.String({ description: 'Why the command must run outside the sandbox (shown to the user).' }),
      ),
      run_in_background: Type.Optional(
        Type.Boolean({
          description:
            'true: start the command as a background job and return its job id at once (for servers, watchers, long builds). Read its output with job_output, stop it with job_kill; you are told when it exits. It ends with the session.',
        }),
      ),
    },
    { additionalProperties: false },
  )
}

export type BashArgs = Static<ReturnType<typeof bashArguments>>

/** One line naming the call (approval prompts, transcripts). */
export const summarizeBash = (args: BashArgs): string =>
  `bash: ${args.command}${args.sandbox === false ? ' [outside the sandbox]' : ''}`

/** Whether the call asks for more than the session's mode allows, and why (shown to the person asked). */
export function unconfinedReason(ctx: Context, args: BashArgs, context: ToolContext): string | undefined {
  if (args.sandbox !== false) return undefined
  if (!args.justification?.trim())
    throw new ToolError(
      'INVALID_ARGS',
      '`sandbox: false` needs a `justification` saying why the command must run outside the sandbox',
    )
  const mode = ctx.sandboxPolicy.mode(context.session)
  if (mode === 'danger-full-access') return undefined
  return `it asks to run outside the sandbox (the session's mode is ${mode}): ${args.justification.trim()}`
}

/** Resolves `workdir` (default: `base` itself) against `base` and checks it is a directory. */
export async function workingDirectory(ctx: Context, base: string, workdir: string | undefined): Promise<string> {
  const dir = resolve(base, workdir ?? '.')
  const type = await ctx.fs.stat(dir).then(
    (stat) => stat.type,
    (error: unknown) => (error instanceof FsError ? undefined : Promise.reject(error)),
  )
  if (type !== 'directory')
    throw new ToolError(
      'BAD_WORKDIR',
      `workdir "${workdir}" (${dir}) ${type ? 'is not a directory' : 'does not exist'}`,
    )
  return dir
}

/**
 * A shell that could not be started or a command that could not be run, as an error the model can act on.
 * Nothing ran. An error whose code is not a ToolErrorCode is returned as it is (the pipeline's TOOL_FAILED).
 */
export function refusal(error: unknown): unknown {
  if (error instanceof SandboxError && error.code === 'SANDBOX_UNAVAILABLE') {
    return new ToolError(
      error.code,
      `The command was not run: ${error.message}. Confined commands cannot run here until the sandbox backend works; a command with sandbox: false (approved by the user) runs unconfined.`,
    )
  }
  const code = (error as { code?: unknown } | undefined)?.code
  if (isToolErrorCode(code) && error instanceof Error)
    return new ToolError(code, `The command was not run: ${error.message}`)
  return error
}

/** How to use a bash tool well, the same for both (their descriptions end with it). */
export const BASH_GUIDANCE = [
  'Use it for builds, tests, git, package managers and other programs. Not for reading, searching or editing files when a tool for that is offered (read, grep, glob, edit, str_replace_editor): those are faster, bounded, and show the user what changed.',
  'Quote paths with spaces ("my dir/file") and prefer single quotes around text with $, ` or !. Chain dependent steps with &&; use ; only when a failure does not matter. Avoid interactive programs (editors, pagers, prompts): pass -y / --no-pager, or set GIT_PAGER=cat.',
  'A command that never ends by itself (a dev server, a watcher) runs until its timeout and is then stopped: run finite checks instead, or raise timeout for a long build or test run.',
  'Example: {"command": "npm test -- --run src/parser.test.ts", "description": "run the parser tests"}.',
].join('\n')
