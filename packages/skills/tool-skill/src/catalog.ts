import { isDeepStrictEqual } from 'node:util'
import { deriveEntries, type Session, type SessionEvent } from '@dsh/session'
import type { SkillCatalogEntry, SkillDiscovery, SkillProblem } from '@dsh/skill'
import type {} from '@dsh/skill'

export interface CatalogTexts {
  intro: string
  changedIntro: string
  emptied: string
}

/** What the log keeps of a discovery: name, description, file and scope of each skill, and the problems. */
export function catalogOf(discovery: SkillDiscovery): { skills: SkillCatalogEntry[]; problems: SkillProblem[] } {
  return {
    skills: discovery.skills.map(({ name, description, file, scope }) => ({ name, description, file, scope })),
    problems: discovery.problems,
  }
}

/** The catalog text the model reads: names and descriptions only (progressive disclosure). */
export function catalogText(skills: readonly SkillCatalogEntry[], texts: CatalogTexts, changed: boolean): string {
  if (!skills.length) return texts.emptied
  return [
    changed ? texts.changedIntro : texts.intro,
    ...skills.map((skill) => `- ${skill.name}: ${skill.description}`),
  ].join('\n')
}

/** The last catalog the model can still read: logged, and not summarized away by a compaction since. */
export function visibleCatalog(session: Session): SessionEvent<'skill/catalog'> | undefined {
  const last = session.last('skill/catalog')
  if (!last) return undefined
  return deriveEntries(session.events).some((entry) => entry.seq === last.seq) ? last : undefined
}

/**
 * Whether `next` must be logged: the skills differ from the last catalog (or it is no longer in the
 * model's history), or the problems differ (people see them). No catalog is logged while there is nothing
 * to say: no skills now and none offered before.
 */
export function catalogChanged(
  session: Session,
  next: { skills: SkillCatalogEntry[]; problems: SkillProblem[] },
): boolean {
  const last = session.last('skill/catalog')
  if (!last) return next.skills.length > 0 || next.problems.length > 0
  if (!isDeepStrictEqual(last.data.problems, next.problems)) return true
  if (!isDeepStrictEqual(last.data.skills, next.skills)) return true
  return next.skills.length > 0 && !visibleCatalog(session)
}
