// Skills from folders (issue #15; docs/architecture.md, "Skills and commands").
import { basename, isAbsolute, join, relative } from 'node:path'
import type { Context } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type {} from '@dsh/app'
import type {} from '@dsh/fs'
import type { SandboxAuthority } from '@dsh/sandbox'
import type {} from '@dsh/sandbox-policy'
import {
  SkillError,
  Skills,
  type Skill,
  type SkillBody,
  type SkillDiscovery,
  type SkillProblem,
  type SkillScope,
} from '@dsh/skill'
import { splitFrontMatter, validateSkillFields } from './front-matter.ts'

export { splitFrontMatter, validateSkillFields } from './front-matter.ts'

export interface Config {
  workspaceDirs: string[]
  home: boolean
  maxSkillBytes: number
  maxFileBytes: number
  maxSkills: number
}

/**
 * Finds skills in the workspace's folders and `$DSH_HOME/skills`: each sub-folder holding a `SKILL.md` is a
 * skill when its front matter is valid, else a problem naming the file and field (never a throw). Every read
 * goes through ctx.fs with the caller's authority, so a skill linked to a secret file is refused like any
 * read for the model; `$DSH_HOME/skills` alone is excepted from the secret `$DSH_HOME`.
 */
export default class SkillFilesystem extends Skills {
  static inject = ['fs', 'app']
  static Config: Schema<Config> = Schema.object({
    workspaceDirs: Schema.array(Schema.string())
      .default(['.dsh/skills', '.agents/skills', '.claude/skills'])
      .description('Folders of the workspace searched for skills, in order; a name found earlier wins.'),
    home: Schema.boolean()
      .default(true)
      .description("Also search $DSH_HOME/skills (the user's skills for every workspace), after the workspace's."),
    maxSkillBytes: Schema.natural()
      .min(1)
      .default(64_000)
      .description('Bytes of a SKILL.md read at most; a longer body is cut with a note.'),
    maxFileBytes: Schema.natural()
      .min(1)
      .default(64_000)
      .description("Bytes of a file inside a skill's folder the skill tool reads at most."),
    maxSkills: Schema.natural()
      .min(1)
      .default(200)
      .description('Skills offered at most; the rest are reported as problems.'),
  })

  constructor(
    ctx: Context,
    private readonly config: Config,
  ) {
    super(ctx)
    // A skill is instructions the next session obeys: every folder searched is never the model's to write
    // (docs/security.md). Optional, so a composition without the policy (a unit test) still finds skills.
    ctx.inject(['sandboxPolicy'], (ctx) =>
      ctx.sandboxPolicy.protectLoaded(ctx, config.workspaceDirs, "the skill-filesystem row's workspaceDirs"),
    )
  }

  async discover(cwd: string, authority?: SandboxAuthority): Promise<SkillDiscovery> {
    const roots: { dir: string; scope: SkillScope }[] = this.config.workspaceDirs.map((dir) => ({
      dir: join(cwd, dir),
      scope: 'workspace',
    }))
    if (this.config.home) roots.push({ dir: this.homeSkills(), scope: 'home' })
    const skills: Skill[] = []
    const problems: SkillProblem[] = []
    const byName = new Map<string, Skill>()
    const seenFiles = new Set<string>()
    for (const root of roots) {
      for (const found of await this.candidates(root.dir, authority)) {
        const outcome = await this.readSkill(found, root.scope, authority)
        if ('field' in outcome) {
          problems.push(outcome)
          continue
        }
        const real = await this.ctx.fs.realpath(outcome.file)
        if (seenFiles.has(real)) continue // one folder reached twice (`.claude/skills` linked to `.agents/skills`)
        seenFiles.add(real)
        const earlier = byName.get(outcome.name)
        if (earlier)
          problems.push({
            file: outcome.file,
            field: 'name',
            message: `"${outcome.name}" is already the name of ${earlier.file}, which is used`,
          })
        else if (skills.length >= this.config.maxSkills)
          problems.push({
            file: outcome.file,
            field: 'name',
            message: `left out: more than ${this.config.maxSkills} skills (maxSkills)`,
          })
        else {
          byName.set(outcome.name, outcome)
          skills.push(outcome)
        }
      }
    }
    return { skills, problems }
  }

  async load(skill: Skill, authority?: SandboxAuthority): Promise<SkillBody> {
    const read = await this.ctx.fs.readText(skill.file, {
      maxBytes: this.config.maxSkillBytes,
      ...(await this.readOptions(skill.scope, authority)),
    })
    const { body } = splitFrontMatter(read.text)
    return { skill, body: body.trim(), truncated: read.truncated || read.endLine < read.totalLines }
  }

  async readFile(skill: Skill, relativePath: string, authority?: SandboxAuthority) {
    const outside = () =>
      new SkillError(
        'SKILL_PATH_OUTSIDE',
        `"${relativePath}" is not a file inside the folder of skill "${skill.name}"; give a path relative to it, such as references/guide.md`,
      )
    if (!relativePath || isAbsolute(relativePath)) throw outside()
    const dir = await this.ctx.fs.realpath(skill.dir)
    const target = await this.ctx.fs.realpath(join(skill.dir, relativePath)).catch(() => undefined)
    // Real paths on both sides: `..` and a link that leads out of the folder are the same refusal.
    const rel = target && relative(dir, target)
    if (!target || !rel || rel.startsWith('..') || isAbsolute(rel)) throw outside()
    const read = await this.ctx.fs.readText(target, {
      maxBytes: this.config.maxFileBytes,
      ...(await this.readOptions(skill.scope, authority)),
    })
    return { path: target, text: read.text, truncated: read.truncated || read.endLine < read.totalLines }
  }

  private homeSkills(): string {
    return join(this.ctx.app.home, 'skills')
  }

  /** The caller's authority, with `$DSH_HOME/skills` readable for a home skill (and nothing else of the home). */
  private async readOptions(
    scope: SkillScope,
    authority: SandboxAuthority | undefined,
  ): Promise<{ authority?: SandboxAuthority }> {
    if (!authority) return {}
    if (scope !== 'home' || !authority.paths) return { authority }
    const home = this.homeSkills()
    const real = await this.ctx.fs.realpath(home).catch(() => home)
    return {
      authority: {
        ...authority,
        paths: { ...authority.paths, readExceptions: [...authority.paths.readExceptions, home, real] },
      },
    }
  }

  /** The `SKILL.md` files one level under `dir` (folders and links to folders), sorted by folder name. */
  private async candidates(dir: string, authority: SandboxAuthority | undefined): Promise<string[]> {
    if (!(await this.ctx.fs.exists(dir))) return []
    const scope: SkillScope = dir === this.homeSkills() ? 'home' : 'workspace'
    let entries
    try {
      entries = await this.ctx.fs.list(dir, await this.readOptions(scope, authority))
    } catch (error) {
      this.ctx.logger('skills').warn('%s was not listed: %s', dir, error instanceof Error ? error.message : error)
      return []
    }
    const files: string[] = []
    for (const entry of [...entries].sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.type !== 'directory' && entry.type !== 'symlink') continue
      const file = join(entry.path, 'SKILL.md')
      if (await this.ctx.fs.exists(file)) files.push(file)
    }
    return files
  }

  /** One SKILL.md as a skill, or the problem that leaves it out. */
  private async readSkill(
    file: string,
    scope: SkillScope,
    authority: SandboxAuthority | undefined,
  ): Promise<Skill | SkillProblem> {
    let text: string
    try {
      const read = await this.ctx.fs.readText(file, {
        maxBytes: this.config.maxSkillBytes,
        ...(await this.readOptions(scope, authority)),
      })
      text = read.text
    } catch (error) {
      return { file, field: 'file', message: `was not read: ${error instanceof Error ? error.message : String(error)}` }
    }
    let data
    try {
      data = splitFrontMatter(text).data
    } catch (error) {
      return {
        file,
        field: 'front matter',
        message: `is not valid YAML: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
      }
    }
    const dir = join(file, '..')
    const fields = validateSkillFields(data, basename(dir), file)
    if ('field' in fields) return fields
    return { ...fields, file, dir, scope }
  }
}
