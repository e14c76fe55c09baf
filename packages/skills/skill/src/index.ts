// Agent Skills (issue #15; docs/architecture.md, "Skills and commands").
import { type Context, Service } from '@dsh/cordis'
import type { SandboxAuthority } from '@dsh/sandbox'
import { oneOf, Type, type Static } from '@dsh/session'

/** A skill's name as the Agent Skills format defines it: lower-case letters, digits and single inner hyphens. */
export const SKILL_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/
export const SKILL_NAME_MAX = 64
export const SKILL_DESCRIPTION_MAX = 1024
export const SKILL_COMPATIBILITY_MAX = 500

/** Where a skill was found: the workspace's folders or the user's `$DSH_HOME/skills`. */
export const SKILL_SCOPES = ['workspace', 'home'] as const
export type SkillScope = (typeof SKILL_SCOPES)[number]

/** One valid skill: its front matter and where its `SKILL.md` is. The body is read only when loaded. */
export interface Skill {
  name: string
  description: string
  /** The `SKILL.md` file (absolute). */
  file: string
  /** The skill's folder: `scripts/`, `references/`, `assets/` are relative to it. */
  dir: string
  scope: SkillScope
  license?: string
  compatibility?: string
  metadata?: Record<string, string>
  /** As written (`allowed-tools`). Shown to people; it grants and restricts nothing (see the README). */
  allowedTools?: string[]
}

/** Why a `SKILL.md` was left out: the file and the front-matter field at fault. */
const SkillProblemSchema = Type.Object({ file: Type.String(), field: Type.String(), message: Type.String() })
export type SkillProblem = Static<typeof SkillProblemSchema>

export interface SkillDiscovery {
  /** Valid skills, first found first (workspace folders in their configured order, then home); names unique. */
  skills: Skill[]
  problems: SkillProblem[]
}

/** The catalog entry the log keeps: what the model is told (name, description) and where it came from. */
const SkillCatalogEntrySchema = Type.Object({
  name: Type.String({ pattern: SKILL_NAME.source, is: 'a skill name' }),
  description: Type.String(),
  file: Type.String(),
  scope: oneOf(SKILL_SCOPES),
})
export type SkillCatalogEntry = Static<typeof SkillCatalogEntrySchema>

/**
 * The skills on offer from here on (written at a turn's first step when they changed, or when an earlier
 * catalog was summarized away). The model reads `content`, as a user-role message (`deriveMessages`);
 * `skills` and `problems` are for people and surfaces. Its type and its check (issue #28.6).
 */
export const SkillCatalogData = Type.Object({
  skills: Type.Array(SkillCatalogEntrySchema),
  problems: Type.Array(SkillProblemSchema),
  content: Type.Array(Type.Object({ type: Type.Literal('text'), text: Type.String() })),
})

declare module '@dsh/session' {
  interface SessionEventMap {
    'skill/catalog': Static<typeof SkillCatalogData>
  }
}

declare module '@dsh/cordis' {
  interface Context {
    skills: Skills
  }
}

/** A skill's body (the Markdown after the front matter), as the `skill` tool hands it to the model. */
export interface SkillBody {
  skill: Skill
  body: string
  /** The file was longer than the provider reads; `body` is its beginning. */
  truncated: boolean
}

/**
 * Skills (definition). Owns: finding skills for a workspace, validating their front matter, reading a
 * skill's body and files inside its folder. Must not own: what the model is told (the consumer), or any
 * permission — a skill is text the model reads, never authority.
 */
export abstract class Skills extends Service {
  constructor(ctx: Context) {
    super(ctx, 'skills')
  }
  /** The skills of `cwd` and the user's home, read with `authority` (secret paths refused) when given. */
  abstract discover(cwd: string, authority?: SandboxAuthority): Promise<SkillDiscovery>
  /** The body of a discovered skill. */
  abstract load(skill: Skill, authority?: SandboxAuthority): Promise<SkillBody>
  /**
   * A text file inside the skill's folder (`references/guide.md`); a path that leaves the folder (`..`,
   * an absolute path, a link out) is refused with SKILL_PATH_OUTSIDE.
   */
  abstract readFile(
    skill: Skill,
    relativePath: string,
    authority?: SandboxAuthority,
  ): Promise<{ path: string; text: string; truncated: boolean }>
}

/** A failure the `skill` tool reports to the model by code. */
export class SkillError extends Error {
  constructor(
    readonly code: 'SKILL_NOT_FOUND' | 'SKILL_PATH_OUTSIDE',
    message: string,
  ) {
    super(message)
    this.name = 'SkillError'
  }
}
