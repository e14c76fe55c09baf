// User slash commands from Markdown files (issue #15; docs/architecture.md, "Skills and commands").
import { basename, join } from 'node:path'
import type { Context } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type { Agent } from '@dsh/agent'
import type {} from '@dsh/app'
import type { CommandDefinition } from '@dsh/commands'
import type {} from '@dsh/credentials'
import type {} from '@dsh/fs'
import type { Route } from '@dsh/llm'
import type { SandboxAuthority } from '@dsh/sandbox'
import type {} from '@dsh/sandbox-policy'
import { expandTemplate, parseCommandFile, type CommandFile } from './template.ts'

export { expandTemplate, parseCommandFile, splitArguments } from './template.ts'

export interface Config {
  workspaceDirs: string[]
  home: boolean
  maxBytes: number
}

export const name = 'commands-markdown'
export const inject = ['commands', 'fs', 'app', 'sandboxPolicy']

export const Config: Schema<Config> = Schema.object({
  workspaceDirs: Schema.array(Schema.string())
    .default(['.dsh/commands', '.claude/commands'])
    .description('Folders of the workspace whose *.md files are commands, in order; a name found earlier wins.'),
  home: Schema.boolean()
    .default(true)
    .description("Also read $DSH_HOME/commands (the user's commands for every workspace), after the workspace's."),
  maxBytes: Schema.natural().min(1).default(32_000).description('Bytes of a command file read at most.'),
})

const FILE_NAME = /^([a-z][a-z0-9_-]*)\.md$/

/**
 * Each `<name>.md` of the folders is a command `/<name>` (front matter `description`, `argument-hint`,
 * `model`; the body is the prompt, `$ARGUMENTS` and `$1…` substituted). Running one sends the expanded
 * prompt to the agent as the user's message: it is what the user asked for by typing the command, and it
 * is text only (nothing in it runs). Files are read afresh at each lookup, under the secret-path rules, so
 * a command file linked to `~/.ssh/id_rsa` is refused like the model's own read.
 */
export function apply(ctx: Context, config: Config) {
  // Command files become the user's prompts: never the model's to write (docs/security.md).
  ctx.sandboxPolicy.protectLoaded(ctx, config.workspaceDirs, "the commands-markdown row's workspaceDirs")
  ctx.commands.useSource(ctx, { list: (cwd) => listCommands(ctx, config, cwd) })
}

async function listCommands(ctx: Context, config: Config, cwd: string): Promise<CommandDefinition[]> {
  const home = join(ctx.app.home, 'commands')
  const dirs = [...config.workspaceDirs.map((dir) => join(cwd, dir)), ...(config.home ? [home] : [])]
  const authority = await readAuthority(ctx, cwd, home)
  const found = new Map<string, CommandDefinition>()
  for (const dir of dirs) {
    if (!(await ctx.fs.exists(dir))) continue
    for (const entry of (await ctx.fs.list(dir, { authority }).catch(() => [])).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      const match = FILE_NAME.exec(entry.name)
      if (!match) {
        if (entry.name.endsWith('.md'))
          ctx
            .logger('commands')
            .warn('%s: the file name is not a command name (lower-case letters, digits, - and _): left out', entry.path)
        continue
      }
      if (found.has(match[1]!)) continue
      const file = await readCommand(ctx, config, entry.path, authority)
      if (file) found.set(match[1]!, userCommand(ctx, match[1]!, entry.path, file))
    }
  }
  return [...found.values()]
}

async function readCommand(
  ctx: Context,
  config: Config,
  path: string,
  authority: SandboxAuthority,
): Promise<CommandFile | undefined> {
  try {
    const read = await ctx.fs.readText(path, { maxBytes: config.maxBytes, authority })
    return parseCommandFile(read.text)
  } catch (error) {
    ctx
      .logger('commands')
      .warn('%s: %s (the command is left out)', path, error instanceof Error ? error.message.split('\n')[0] : error)
    return undefined
  }
}

function userCommand(ctx: Context, name: string, path: string, file: CommandFile): CommandDefinition {
  const firstLine =
    file.template
      .split('\n')
      .find((line) => line.trim())
      ?.trim() ?? ''
  return {
    name,
    description:
      file.description ?? (firstLine.length > 80 ? `${firstLine.slice(0, 79)}…` : firstLine || `(${basename(path)})`),
    ...(file.argumentHint ? { argumentHint: file.argumentHint } : {}),
    origin: path,
    run(args, { agent }) {
      const notes = file.model ? [applyModel(ctx, agent, file.model)] : []
      const expanded = expandTemplate(file.template, args)
      // Repository text bound for the model and the log: a credential value in it becomes a marker.
      const prompt = ctx.get('credentials')?.redact(expanded) ?? expanded
      return { output: [`/${name} (${path})`, ...notes].join('\n'), prompt }
    },
  }
}

/** `model: provider/name` (or a name on the current provider) becomes the session's route, like /model. */
function applyModel(ctx: Context, agent: Agent, model: string): string {
  const at = model.indexOf('/')
  const route: Route =
    at > 0 ? { provider: model.slice(0, at), model: model.slice(at + 1) } : { provider: agent.route.provider, model }
  const providers = ctx.get('llm')?.providers() ?? []
  if (!providers.includes(route.provider))
    throw Object.assign(
      new Error(
        `the command's model "${model}" names no mounted provider (mounted: ${providers.join(', ') || 'none'})`,
      ),
      { code: 'COMMAND_BAD_MODEL' },
    )
  agent.setRoute(route)
  return `model: ${route.provider}/${route.model} from now on in this session (the command's front matter)`
}

/** Secret-path rules for reading command files (`$DSH_HOME/commands` alone excepted from the secret home). */
async function readAuthority(ctx: Context, cwd: string, home: string): Promise<SandboxAuthority> {
  const paths = ctx.sandboxPolicy.pathRules([cwd])
  const realHome = await ctx.fs.realpath(home).catch(() => home)
  return {
    mode: 'read-only',
    writableRoots: [],
    paths: { ...paths, readExceptions: [...paths.readExceptions, home, realHome] },
  }
}
