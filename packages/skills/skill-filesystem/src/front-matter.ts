import { parse } from 'yaml'
import {
  SKILL_COMPATIBILITY_MAX,
  SKILL_DESCRIPTION_MAX,
  SKILL_NAME,
  SKILL_NAME_MAX,
  type Skill,
  type SkillProblem,
} from '@dsh/skill'

/** A Markdown file split into its YAML front matter (parsed) and its body. */
export interface FrontMatterDocument {
  data: Record<string, unknown>
  body: string
}

const FENCE = /^---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/

/** Splits `---\n…\n---` from the body; a file without front matter has empty data. Throws on bad YAML. */
export function splitFrontMatter(text: string): FrontMatterDocument {
  const source = text.startsWith('\uFEFF') ? text.slice(1) : text
  const match = FENCE.exec(source)
  if (!match) return { data: {}, body: source }
  const parsed: unknown = parse(match[1]!) ?? {}
  if (typeof parsed !== 'object' || Array.isArray(parsed))
    throw new Error('the front matter is not a mapping of fields')
  return { data: parsed as Record<string, unknown>, body: source.slice(match[0].length) }
}

type Fields = Pick<Skill, 'name' | 'description' | 'license' | 'compatibility' | 'metadata' | 'allowedTools'>

/**
 * Checks a SKILL.md's front matter against the Agent Skills format: the first problem found, named by field,
 * or the fields. `folder` is the skill's directory name, which `name` must equal. Fields the format does not
 * define (Claude Code's `model`, `disable-model-invocation`…) are ignored, so such skills still load.
 */
export function validateSkillFields(
  data: Record<string, unknown>,
  folder: string,
  file: string,
): Fields | SkillProblem {
  const problem = (field: string, message: string): SkillProblem => ({ file, field, message })
  const { name, description, license, compatibility, metadata } = data
  if (typeof name !== 'string' || !name)
    return problem('name', 'is required: a string of lower-case letters, digits and hyphens')
  if (name.length > SKILL_NAME_MAX)
    return problem('name', `is ${name.length} characters long; at most ${SKILL_NAME_MAX}`)
  if (!SKILL_NAME.test(name))
    return problem('name', `"${name}" may hold only lower-case letters, digits and single hyphens between them`)
  if (name !== folder) return problem('name', `"${name}" must equal the skill's folder name "${folder}"`)
  if (typeof description !== 'string' || !description.trim())
    return problem('description', 'is required: a non-empty string saying what the skill does and when to use it')
  if (description.length > SKILL_DESCRIPTION_MAX)
    return problem('description', `is ${description.length} characters long; at most ${SKILL_DESCRIPTION_MAX}`)
  if (license !== undefined && typeof license !== 'string') return problem('license', 'must be a string')
  if (
    compatibility !== undefined &&
    (typeof compatibility !== 'string' || compatibility.length > SKILL_COMPATIBILITY_MAX)
  )
    return problem('compatibility', `must be a string of at most ${SKILL_COMPATIBILITY_MAX} characters`)
  if (metadata !== undefined && !isStringMap(metadata))
    return problem('metadata', 'must be a mapping of string keys to string values')
  const allowedTools = toolList(data['allowed-tools'])
  if (allowedTools === null)
    return problem(
      'allowed-tools',
      'must be a string of tool names separated by spaces or commas, or a list of strings',
    )
  return {
    name,
    description: description.trim(),
    ...(license ? { license } : {}),
    ...(compatibility ? { compatibility } : {}),
    ...(metadata ? { metadata: metadata as Record<string, string> } : {}),
    ...(allowedTools ? { allowedTools } : {}),
  }
}

function isStringMap(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every((entry) => typeof entry === 'string')
  )
}

/** `allowed-tools` as the format writes it (space-separated; Claude Code also takes commas or a list). */
function toolList(value: unknown): string[] | undefined | null {
  if (value === undefined) return undefined
  if (typeof value === 'string') return value.match(/[^\s,(]+(?:\([^)]*\))?/g) ?? [] // `Bash(git add:*)` stays whole
  if (Array.isArray(value) && value.every((entry) => typeof entry === 'string')) return value as string[]
  return null
}
