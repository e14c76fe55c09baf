import { platform, release } from 'node:os'
import { type Context, Service } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type { Route } from '@dsh/llm'

/**
 * A named part of the system prompt. Lower `order` comes first. The conventional bands: 0 persona, 10–19
 * how tools are used (@dsh/tools), 20–39 one section per tool package, 40–49 authority and approvals, 50–59
 * context (spill, compaction), 60–69 project instructions; a section of a model family's own is a `text`
 * function that reads `provider` / `model`.
 */
export interface PromptSection {
  name: string
  order: number
  /** The package that contributes it (shown by `dsh prompt show`); the contributing plugin's name when left out. */
  owner?: string
  /** Text with `{{variable}}` placeholders, or a function of the variables (empty: left out). */
  text: string | ((vars: PromptVariables) => string)
  /**
   * The tools this section describes: it is left out of the prompt of an agent that is not offered every one
   * of them (an agent preset that hides `bash` hides the shell advice too). Absent: always kept.
   */
  tools?: string[]
}

/** One section as it will be sent: rendered, trimmed, never empty. */
export interface RenderedSection {
  name: string
  order: number
  owner: string
  text: string
}

/** What the prompt is assembled for. */
export interface AssembleInput {
  cwd: string
  route: Route
  /** The tools the agent is offered: sections describing other tools are left out. */
  tools: string[]
  /** The agent it is for: its own sections join (and shadow global ones of the same name). */
  agentId?: string
  override?: string
  vars?: Record<string, string>
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

const PERSONA = `You are dsh, a coding agent working in the repository at {{cwd}} on {{os}}. You act through tools, and the user sees every call you make. Today is {{date}}.

How to work:
- Understand before you change. Find the relevant code with the search tools, read it, and follow the conventions you see (naming, structure, error handling, tests). Never guess at an API or a file you have not looked at.
- For work of more than a couple of steps, make a short plan first{{todoHint}}, then keep to it and say when it changes.
- Make the smallest change that solves the task. Do not rewrite working code, reformat files you do not otherwise touch, or add features nobody asked for.
- Verify. Run the project's own tests, type checks or linters for what you changed (see the runtime context for the commands found), read the failures, and fix what you broke. If you cannot run them, say so.
- Git: never commit, push, amend, rebase, reset or otherwise rewrite history unless the user asks you to. Leave the user's unrelated changes alone.
- Ask when the request is ambiguous in a way that changes the result, or before something destructive or hard to undo; otherwise act, and mention the assumptions you made.
- When a tool call fails, read the error: it says what went wrong and usually what to do next. Do not repeat the same call unchanged.

When you are done, answer briefly: what you changed and why, how you checked it, and anything left undone or uncertain. Refer to code as path:line (src/parser.ts:42). Do not paste whole files back; the user can open them.`

/** The name of the plugin `ctx` belongs to (its package, for a row's plugin), for sections that name no owner. */
function pluginName(ctx: Context): string {
  const runtime = (ctx as unknown as { fiber?: { runtime?: { name?: unknown } } }).fiber?.runtime
  return typeof runtime?.name === 'string' && runtime.name ? runtime.name : 'unknown'
}

/**
 * Adds `section` to the prompt whenever a system prompt is mounted, for as long as `ctx` lives: how a
 * capability's package contributes what the model should know about it without requiring the service.
 */
export function contributeSection(ctx: Context, section: PromptSection): void {
  ctx.inject(['systemPrompt'], (inner: Context) => inner.systemPrompt.section(inner, section))
}

export function render(text: string, vars: PromptVariables): string {
  return text.replace(/\{\{\s*([A-Za-z0-9_.]+)\s*\}\}/g, (whole, name: string) => vars[name] ?? whole)
}

/**
 * The system prompt (D+P; docs/architecture.md, "The turn"). Owns: sections, variables and rendering. Must
 * not own: when the prompt is logged (the loop writes `request/header` when it changes).
 */
export class SystemPrompt extends Service {
  static Config: Schema<Config> = Schema.object({
    persona: Schema.string()
      .role('textarea')
      .default(PERSONA)
      .description('The first section: who the agent is and how it works.'),
    override: Schema.string()
      .role('textarea')
      .description('A whole system prompt replacing every section (variables still apply).'),
  })

  private readonly sections: (PromptSection & { owner: string; agentId?: string })[] = []

  constructor(
    ctx: Context,
    private readonly config: Config,
  ) {
    super(ctx, 'systemPrompt')
    this.section(ctx, { name: 'persona', order: 0, owner: '@dsh/system-prompt', text: config.persona })
  }

  /**
   * Adds a section for as long as `ctx` lives. With `agentId`, only that agent's prompt has it (a plugin its
   * agent preset mounted), in place of a global section of the same name. A name is taken once per visibility.
   */
  section(ctx: Context, section: PromptSection, options: { agentId?: string } = {}): void {
    const owned = { ...section, owner: section.owner ?? pluginName(ctx), agentId: options.agentId }
    ctx.effect(() => {
      if (this.sections.some((other) => other.name === section.name && other.agentId === options.agentId)) {
        throw new Error(
          `system prompt section "${section.name}" already exists${options.agentId ? ` for agent ${options.agentId}` : ''}`,
        )
      }
      this.sections.push(owned)
      return () => this.sections.splice(this.sections.indexOf(owned), 1)
    }, `prompt section ${section.name}`)
  }

  /** The prompt as one text, as a turn sends it. */
  async assemble(input: AssembleInput): Promise<string> {
    const { override, sections } = await this.render(input)
    return override ?? sections.map((section) => section.text).join('\n\n')
  }

  /** The prompt section by section (or the override that replaces them), rendered: what `dsh prompt show` prints. */
  async render(input: AssembleInput): Promise<{ override?: string; sections: RenderedSection[] }> {
    const vars: PromptVariables = {
      cwd: input.cwd,
      provider: input.route.provider,
      model: input.route.model,
      date: new Date().toISOString().slice(0, 10),
      os: `${platform()} ${release()}`,
      shell: process.env.SHELL ?? 'bash',
      tools: input.tools.join(', '),
      todoHint: ((todo) => (todo ? ` with the ${todo} tool` : ''))(input.tools.find((tool) => tool.startsWith('todo'))),
      ...input.vars,
    }
    const override = input.override ?? this.config.override
    const offered = new Set(input.tools)
    const own = new Set(
      this.sections.flatMap((section) =>
        section.agentId !== undefined && section.agentId === input.agentId ? [section.name] : [],
      ),
    )
    const inScope = this.sections.filter((section) =>
      section.agentId === undefined ? !own.has(section.name) : section.agentId === input.agentId,
    )
    const kept = inScope.filter((section) => !section.tools || section.tools.every((tool) => offered.has(tool)))
    const initial: PromptDraft = {
      sections: kept.sort((a, b) => a.order - b.order || a.name.localeCompare(b.name)),
      vars,
    }
    if (override !== undefined) initial.override = override
    const draft = await this.ctx.waterfall('system-prompt/assemble', initial, async () => initial)
    if (draft.override !== undefined) return { override: render(draft.override, draft.vars), sections: [] }
    const sections: RenderedSection[] = []
    for (const section of draft.sections) {
      const text = render(
        typeof section.text === 'function' ? section.text(draft.vars) : section.text,
        draft.vars,
      ).trim()
      if (text) sections.push({ name: section.name, order: section.order, owner: section.owner ?? 'unknown', text })
    }
    return { sections }
  }
}

export default SystemPrompt
