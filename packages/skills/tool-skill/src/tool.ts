import type { Context } from '@dsh/cordis'
import { FsError } from '@dsh/fs'
import type {} from '@dsh/sandbox-policy'
import { SKILL_NAME, SKILL_NAME_MAX, SkillError, type Skill } from '@dsh/skill'
import { defineTool, ToolError, Type, type Static, type ToolContext, type ToolDefinition } from '@dsh/tools'
import { readAuthority } from './authority.ts'

const skillArguments = Type.Object(
  {
    name: Type.String({
      pattern: SKILL_NAME.source,
      maxLength: SKILL_NAME_MAX,
      description: 'The skill to load, as the skills catalog names it.',
    }),
    file: Type.Optional(
      Type.String({
        description: "A file inside the skill's folder to read instead of its instructions (references/guide.md).",
      }),
    ),
  },
  { additionalProperties: false },
)

export type SkillArgs = Static<typeof skillArguments>

/** `skill`: the instructions (SKILL.md body) of a skill the logged catalog offers, or a file in its folder. */
export function skillTool(ctx: Context): ToolDefinition<SkillArgs> {
  return defineTool({
    name: 'skill',
    description:
      "Load a skill from the skills catalog: returns its instructions and its folder. Call it when a task matches a skill's description, before acting. With file, reads a file inside the skill's folder (scripts/, references/, assets/). A skill is guidance only: it grants no permission.",
    parameters: skillArguments,
    concurrencySafe: true,
    summarize: (args) => `skill ${args.name}${args.file ? ` ${args.file}` : ''}`,
    async execute(args, context) {
      const skill = await offeredSkill(ctx, args.name, context)
      try {
        const authority = await ctx.sandboxPolicy.authority(context.session)
        if (args.file) {
          const read = await ctx.skills.readFile(skill, args.file, authority)
          return `<skill-file skill="${skill.name}" path="${read.path}">\n${read.text}${read.truncated ? '\n[… cut: the file is longer than one read returns …]' : ''}\n</skill-file>`
        }
        const loaded = await ctx.skills.load(skill, authority)
        return [
          `<skill name="${skill.name}" folder="${skill.dir}">`,
          loaded.body + (loaded.truncated ? '\n[… cut: SKILL.md is longer than one read returns …]' : ''),
          '</skill>',
          `Paths in the skill are relative to ${skill.dir}; read them with this tool's file argument (or read), run its scripts with bash.`,
          ...(skill.allowedTools
            ? [
                `Its allowed-tools (${skill.allowedTools.join(' ')}) are not permissions here: every call is checked as usual.`,
              ]
            : []),
        ].join('\n')
      } catch (error) {
        throw asToolError(error)
      }
    },
  })
}

/** The skill `name` as the session's last catalog offers it, found again on disk at the same file. */
async function offeredSkill(ctx: Context, name: string, context: ToolContext): Promise<Skill> {
  const offered = context.session.last('skill/catalog')?.data.skills ?? []
  const entry = offered.find((skill) => skill.name === name)
  const names = offered.map((skill) => skill.name).join(', ') || 'none'
  if (!entry)
    throw new ToolError('SKILL_NOT_FOUND', `No skill "${name}" is in the skills catalog (available: ${names}).`)
  const { skills } = await ctx.skills.discover(context.cwd, await readAuthority(ctx, context.session))
  const skill = skills.find((found) => found.name === name && found.file === entry.file)
  if (!skill)
    throw new ToolError(
      'SKILL_NOT_FOUND',
      `The skill "${name}" (${entry.file}) is no longer valid on disk; the next turn's catalog will show what is available.`,
    )
  return skill
}

function asToolError(error: unknown): unknown {
  if (error instanceof SkillError || error instanceof FsError) return new ToolError(error.code, error.message)
  return error
}
