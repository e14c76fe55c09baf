import type { Context } from '@dsh/cordis'
import type { CommandDefinition } from '@dsh/commands'
import type {} from '@dsh/skill'
import { readAuthority } from './authority.ts'

/** `/skills`: the skills of the agent's workspace and home, and every SKILL.md left out with why. */
export function skillsCommand(ctx: Context): CommandDefinition {
  return {
    name: 'skills',
    description: 'List the skills the model can load, and the SKILL.md files left out.',
    async run(_args, { agent }) {
      const { skills, problems } = await ctx.skills.discover(agent.cwd, await readAuthority(ctx, agent.session))
      const lines = skills.length
        ? skills.map(
            (skill) =>
              `${skill.name} (${skill.scope}) — ${skill.description}${skill.allowedTools ? ` [allowed-tools, not a permission: ${skill.allowedTools.join(' ')}]` : ''}`,
          )
        : ['No skills found.']
      for (const problem of problems) lines.push(`left out: ${problem.file}: ${problem.field} ${problem.message}`)
      return lines.join('\n')
    },
  }
}
