import { platform, release } from 'node:os'
import { type Context, Service } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type { Route } from '@dsh/llm'

/** A named part of the system prompt. Lower `order` comes first. */
export interface PromptSection {
  name: string
  order: number
  /** Text with `{{variable}}` placeholders, or a function of the variables. */
  text: string | ((vars: PromptVariables) => string)
}

export interface PromptVariables {
  cwd: string
  provider: string
  model: string
  date: string
  os: string
  shell: string
  tools: string
  [name: string]: string
}

/** What `system-prompt/assemble` listeners see and may change. */
export interface PromptDraft {
  sections: PromptSection[]
  vars: PromptVariables
  /** A whole prompt that replaces the sections (an SDK `systemPrompt`, `DSH_SYSTEM_PROMPT`). */
  override?: string
}

declare module '@dsh/cordis' {
  interface Context {
    systemPrompt: SystemPrompt
  }
  interface Events {
    /** @mode waterfall — may add, remove or rewrite sections and variables before rendering. */
    'system-prompt/assemble'(draft: PromptDraft, next: () => Promise<PromptDraft>): Promise<PromptDraft>
  }
}

export interface Config {
  persona: string
  override?: string
}

const PERSONA = `You are dsh, a coding agent working in the repository at {{cwd}} on {{os}}. You act through tools: read before you change a file, make the smallest change that solves the task, run the project's own checks when they exist, and say plainly what you did and what you could not do. Today is {{date}}.`

export function render(text: string, vars: PromptVariables): string {
  return text.replace(/\{\{\s*([A-Za-z0-9_.]+)\s*\}\}/g, (whole, name: string) => vars[name] ?? whole)
}

/**
 * The system prompt (D+P; docs/architecture.md, "The turn"). Owns: sections, variables and rendering. Must
 * not own: when the prompt is logged (the loop writes `request/header` when it changes).
 */
export class SystemPrompt extends Service {
  static Config: Schema<Config> = Schema.object({
    persona: Schema.string().role('textarea').default(PERSONA).description('The first section: who the agent is and how it works.'),
    override: Schema.string().role('textarea').description('A whole system prompt replacing every section (variables still apply).'),
  })

  private readonly sections: PromptSection[] = []

  constructor(
    ctx: Context,
    private readonly config: Config,
  ) {
    super(ctx, 'systemPrompt')
    this.section(ctx, { name: 'persona', order: 0, text: config.persona })
  }

  /** Adds a section for as long as `ctx` lives. */
  section(ctx: Context, section: PromptSection): void {
    ctx.effect(() => {
      if (this.sections.some((other) => other.name === section.name)) throw new Error(`system prompt section "${section.name}" already exists`)
      this.sections.push(section)
      return () => this.sections.splice(this.sections.indexOf(section), 1)
    }, `prompt section ${section.name}`)
  }

  async assemble(input: { cwd: string; route: Route; tools: string[]; override?: string; vars?: Record<string, string> }): Promise<string> {
    const vars: PromptVariables = {
      cwd: input.cwd,
      provider: input.route.provider,
      model: input.route.model,
      date: new Date().toISOString().slice(0, 10),
      os: `${platform()} ${release()}`,
      shell: process.env.SHELL ?? 'bash',
      tools: input.tools.join(', '),
      ...input.vars,
    }
    const override = input.override ?? this.config.override
    const initial: PromptDraft = { sections: [...this.sections].sort((a, b) => a.order - b.order || a.name.localeCompare(b.name)), vars }
    if (override !== undefined) initial.override = override
    const draft = await this.ctx.waterfall('system-prompt/assemble', initial, async () => initial)
    if (draft.override !== undefined) return render(draft.override, draft.vars)
    return draft.sections
      .map((section) => render(typeof section.text === 'function' ? section.text(draft.vars) : section.text, draft.vars).trim())
      .filter(Boolean)
      .join('\n\n')
  }
}

export default SystemPrompt
