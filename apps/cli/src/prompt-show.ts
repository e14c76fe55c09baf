// `dsh prompt show`: what the model is sent before any conversation, section by section (docs/prompt.md).
import { bootTree } from '@dsh/app-boot'
import { LauncherUsageError } from './args.ts'

/** One part of the request header, with its owner and estimated size. */
export interface PromptPart {
  kind: 'section' | 'tool'
  name: string
  /** The contributing package of a section (the tool registry does not record who registered a tool). */
  owner?: string
  tokens: number
  text: string
}

export interface PromptReport {
  profile: string
  route: { provider: string; model: string }
  parts: PromptPart[]
  /** The whole prompt when an override replaces the sections. */
  override?: string
  systemTokens: number
  toolTokens: number
}

interface ShowArgs {
  json: boolean
}

function parseShowArgs(rest: string[]): ShowArgs {
  if (rest[1] !== 'show') throw new LauncherUsageError(`dsh prompt: unknown command "${rest[1] ?? ''}" (dsh prompt show [--json])`)
  const args: ShowArgs = { json: false }
  for (const arg of rest.slice(2)) {
    if (arg === '--json') args.json = true
    else throw new LauncherUsageError(`dsh prompt show: unknown argument "${arg}" (--profile, --patch, --json)`)
  }
  return args
}

/**
 * Boots the profile's tree without launching its surfaces, assembles the system prompt for the default route
 * and the working directory as a turn would, and lists the tool schemas a request carries. Sizes are the
 * token meter's estimate (characters / its charsPerToken) when a token-meter row is mounted, else chars / 4.
 */
export async function promptReport(options: { appDir: string; profile: string; patches: string[]; cwd: string }): Promise<PromptReport> {
  const tree = await bootTree({ ...options, argv: [], onExitRequest: () => {} })
  try {
    const root = tree.root as any
    const estimate: (text: string) => number = root.get('tokenMeter') ? (text) => root.tokenMeter.estimateText(text) : (text) => Math.ceil(text.length / 4)
    const route = root.agents.defaultRoute()
    const tools = root.tools.schemas('') as { name: string; description: string; parameters: object }[]
    const rendered = await root.systemPrompt.render({ cwd: options.cwd, route, tools: tools.map((tool) => tool.name) })
    const parts: PromptPart[] = rendered.sections.map((section: { name: string; owner: string; text: string }) => ({ kind: 'section', ...section, tokens: estimate(section.text) }))
    for (const tool of tools) {
      const text = JSON.stringify({ name: tool.name, description: tool.description, parameters: tool.parameters })
      parts.push({ kind: 'tool', name: tool.name, tokens: estimate(text), text: tool.description })
    }
    const system: string = rendered.override ?? rendered.sections.map((section: { text: string }) => section.text).join('\n\n')
    const toolTokens = estimate(tools.map((tool) => JSON.stringify(tool)).join(''))
    return {
      profile: options.profile,
      route: { provider: route.provider, model: route.model },
      parts,
      ...(rendered.override !== undefined ? { override: rendered.override } : {}),
      systemTokens: estimate(system),
      toolTokens,
    }
  } finally {
    await tree.stop()
  }
}

function format(report: PromptReport): string {
  const sections = report.parts.filter((part) => part.kind === 'section')
  const tools = report.parts.filter((part) => part.kind === 'tool')
  const out = [
    `# system prompt for profile ${report.profile}, route ${report.route.provider}/${report.route.model}`,
    `# ${report.systemTokens} tokens in ${report.override !== undefined ? 'an override' : `${sections.length} sections`}; tool schemas ${report.toolTokens} tokens (${tools.length} tools); total ${report.systemTokens + report.toolTokens} (estimated)`,
    '',
  ]
  if (report.override !== undefined) out.push('## override (replaces every section)', report.override, '')
  for (const part of sections) out.push(`## ${part.name} — ${part.owner}, ${part.tokens} tokens`, part.text, '')
  out.push('## tools (name, tokens of its schema)')
  for (const part of tools) out.push(`${part.name.padEnd(20)} ${String(part.tokens).padStart(6)}`)
  return `${out.join('\n')}\n`
}

/** Runs `dsh prompt …`; returns the exit code. */
export async function promptCommand(rest: string[], options: Parameters<typeof promptReport>[0], stdout: NodeJS.WritableStream): Promise<number> {
  const args = parseShowArgs(rest)
  const report = await promptReport(options)
  stdout.write(args.json ? `${JSON.stringify(report, null, 2)}\n` : format(report))
  return 0
}
