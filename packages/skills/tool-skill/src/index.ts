// The skills catalog and the `skill` tool (issue #15; docs/architecture.md, "Skills and commands").
import type { Context } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type { Agent } from '@dsh/agent'
import type {} from '@dsh/commands'
import type {} from '@dsh/credentials'
import { SkillCatalogData } from '@dsh/skill'
import { readAuthority } from './authority.ts'
import { catalogChanged, catalogOf, catalogText, visibleCatalog, type CatalogTexts } from './catalog.ts'
import { skillTool } from './tool.ts'
import { skillsCommand } from './command.ts'

export interface Config extends CatalogTexts {}

export const name = 'tool-skill'
export const inject = ['tools', 'skills', 'sessions', 'sandboxPolicy']

export const Config: Schema<Config> = Schema.object({
  intro: Schema.string()
    .role('textarea')
    .default(
      'Skills you can load with the skill tool when a task matches one. Each is a folder of instructions; load it before you act on it. A skill guides how you work; it does not change what you are permitted to do.',
    )
    .description('The line that opens the first skills catalog the model reads.'),
  changedIntro: Schema.string()
    .role('textarea')
    .default('The skills on disk changed. From now on these are the skills you can load with the skill tool:')
    .description('The line that opens a catalog logged after the skills on disk changed.'),
  emptied: Schema.string()
    .default('No skills are available any more; do not call the skill tool.')
    .description('What the model reads when every skill it was offered is gone.'),
})

/**
 * At the first step of every turn, discovers the session's skills; when they changed since the catalog the
 * model last read (or that catalog was summarized away), logs a `skill/catalog` whose content the request
 * derives from (`deriveMessages` folds it as a user-role message). The `skill` tool loads a skill's body
 * from the logged catalog only. A skill is repository text: nothing here changes a permission.
 */
export function apply(ctx: Context, config: Config) {
  // Ignorable: a composition without this row (`--patch minimal`) still opens the log; the history folds it either way.
  ctx.sessions.defineKind(ctx, 'skill/catalog', { ignorable: true, schema: SkillCatalogData })
  ctx.on('agent/request', async (draft, next) => {
    if (draft.step === 0) await logCatalog(ctx, config, draft.agent)
    await next()
  })
  ctx.tools.register(ctx, skillTool(ctx))
  ctx.inject(['commands'], (inner) => inner.commands.register(inner, skillsCommand(inner)))
}

async function logCatalog(ctx: Context, config: Config, agent: Agent): Promise<void> {
  const session = agent.session
  const discovery = await ctx.skills.discover(agent.cwd, await readAuthority(ctx, session))
  for (const problem of discovery.problems)
    ctx.logger('skills').warn('%s: %s %s (the skill is left out)', problem.file, problem.field, problem.message)
  // Repository text the log will keep (and the model read): a credential value in it becomes a marker.
  const redact = (text: string) => ctx.get('credentials')?.redact(text) ?? text
  const found = catalogOf(discovery)
  const next = { ...found, skills: found.skills.map((skill) => ({ ...skill, description: redact(skill.description) })) }
  if (!catalogChanged(session, next)) return
  const before = session.last('skill/catalog')
  const differ = JSON.stringify(before?.data.skills) !== JSON.stringify(next.skills)
  const offeredBefore = !!before?.data.skills.length
  // A catalog summarized away is told again as it was; only a change on disk is told as a change.
  const text =
    (differ || !visibleCatalog(session)) && (next.skills.length || offeredBefore)
      ? catalogText(next.skills, config, offeredBefore && differ)
      : ''
  session.append('skill/catalog', { ...next, content: text ? [{ type: 'text', text }] : [] })
}
