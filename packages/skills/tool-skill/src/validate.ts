import { SKILL_NAME } from '@dsh/skill'

const isText = (value: unknown): value is string => typeof value === 'string'

/** The `skill/catalog` validator: whatever a fold or a surface reads is there with its type. */
export function catalogProblem(data: any): string | undefined {
  if (!Array.isArray(data?.skills)) return 'skills must be a list'
  for (const [i, skill] of data.skills.entries()) {
    if (!isText(skill?.name) || !SKILL_NAME.test(skill.name)) return `skills[${i}].name must be a skill name`
    if (!isText(skill.description) || !isText(skill.file)) return `skills[${i}] must have a description and a file`
    if (skill.scope !== 'workspace' && skill.scope !== 'home') return `skills[${i}].scope must be workspace or home`
  }
  if (!Array.isArray(data.problems) || !data.problems.every((p: any) => isText(p?.file) && isText(p.field) && isText(p.message))) return 'problems must be a list of { file, field, message }'
  if (!Array.isArray(data.content) || !data.content.every((block: any) => block?.type === 'text' && isText(block.text))) return 'content must be a list of text blocks'
  return undefined
}
