// `dsh prompt show`: what the model is sent before any conversation, section by section (docs/prompt.md).
import { realpathSync } from 'node:fs'
import { bootTree } from '@dsh/app-boot'
import { LauncherUsageError } from './args.ts'

/** One part of the request header, with its owner and estimated size. */
export interface PromptPart {
  /**
   * `context`: the runtime context a new session in this directory would log first (a user message, not the
   * system prompt); `memory`: the memory files it would read (`memory/loaded` of @dsh/tool-memory).
   */
  kind: 'section' | 'tool' | 'context' | 'memory'
  name: string
  /** The contributing package of a section (the tool registry does not record who registered a tool). */
  owner?: string
  tokens: number
  text: string
  /** For `memory`: the bytes of the entries it holds, and the files they come from. */
  bytes?: number
  files?: { scope: string; path: string; entries: number; bytes: number }[]
}

export interface PromptReport {
  profile: string
  /** The sandbox mode the runtime context was gathered for (`--permission`'s, else the default's). */
  mode?: string
  /** The agent preset whose tools are listed (`--preset`; absent: every tool mounted). */
  agentPreset?: string
  route: { provider: string; model: string }
  parts: PromptPart[]
  /** The whole prompt when an override replaces the sections. */
  override?: string
  systemTokens: number
  toolTokens: number
}

interface ShowArgs {
  json: boolean
  /** A permission preset (`--permission`): the mode the runtime context is gathered under. */
  permission?: string
  /** An agent preset (`--preset`): the tools a new session of it is offered. */
  agentPreset?: string
}

const USAGE = '(--profile, --patch, --permission <permission preset>, --preset <agent preset>, --json)'

function parseShowArgs(rest: string[]): ShowArgs {
  if (rest[1] !== 'show')
    throw new LauncherUsageError(`dsh prompt: unknown command "${rest[1] ?? ''}" (dsh prompt show [--json])`)
  const args: ShowArgs = { json: false }
  const words = rest.slice(2)
  for (let i = 0; i < words.length; i++) {
    const arg = words[i]!
    if (arg === '--json') args.json = true
    else if (arg === '--permission' && words[i + 1] && !words[i + 1]!.startsWith('--')) args.permission = words[++i]
    else if (arg === '--preset' && words[i + 1] && !words[i + 1]!.startsWith('--')) args.agentPreset = words[++i]
    else throw new LauncherUsageError(`dsh prompt show: unknown argument "${arg}" ${USAGE}`)
  }
  return args
}

/**
 * Boots the profile's tree without launching its surfaces, assembles the system prompt for the default route
 * and the working directory as a turn would, and lists the tool schemas a request carries. Sizes are the
 * token meter's estimate (characters / its charsPerToken) when a token-meter row is mounted, else chars / 4.
 */
export async function promptReport(
  options: { appDir: string; profile: string; patches: string[]; cwd: string },
  choice: { permission?: string; agentPreset?: string } = {},
): Promise<PromptReport> {
  const tree = await bootTree({ ...options, argv: [], onExitRequest: () => {} })
  try {
    const root = tree.root as any
    const estimate: (text: string) => number = root.get('tokenMeter')
      ? (text) => root.tokenMeter.estimateText(text)
      : (text) => Math.ceil(text.length / 4)
    const route = root.agents.defaultRoute()
    const { tools, rendered } = await offered(root, choice.agentPreset, { cwd: options.cwd, route })
    const parts: PromptPart[] = rendered.sections.map((section: { name: string; owner: string; text: string }) => ({
      kind: 'section',
      ...section,
      tokens: estimate(section.text),
    }))
    for (const tool of tools) {
      const text = JSON.stringify({ name: tool.name, description: tool.description, parameters: tool.parameters })
      parts.push({ kind: 'tool', name: tool.name, tokens: estimate(text), text: tool.description })
    }
    const context = await runtimeContext(tree, options.cwd, choice.permission)
    if (context)
      parts.push({
        kind: 'context',
        name: 'runtime-context',
        owner: '@dsh/runtime-context',
        tokens: estimate(context.text),
        text: context.text,
      })
    const memory = await memoryPreview(root, options.cwd)
    if (memory) parts.push({ ...memory, tokens: estimate(memory.text) })
    const system: string =
      rendered.override ?? rendered.sections.map((section: { text: string }) => section.text).join('\n\n')
    const toolTokens = estimate(tools.map((tool) => JSON.stringify(tool)).join(''))
    return {
      profile: options.profile,
      ...(context?.mode ? { mode: context.mode } : {}),
      ...(choice.agentPreset ? { agentPreset: choice.agentPreset } : {}),
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

type ToolSchema = { name: string; description: string; parameters: object }

/**
 * The tools and system prompt a new session is offered: of the agent preset `name` (its plugins mounted for the
 * preview, so `minimal` shows its persistent bash), else every tool mounted.
 */
async function offered(
  root: any,
  name: string | undefined,
  where: { cwd: string; route: object },
): Promise<{ tools: ToolSchema[]; rendered: any }> {
  if (!name) {
    const tools = root.tools.schemas('') as ToolSchema[]
    return { tools, rendered: await root.systemPrompt.render({ ...where, tools: tools.map((tool) => tool.name) }) }
  }
  const presets = root.get('agentPresets')
  if (!presets) throw new LauncherUsageError('dsh prompt show: --preset needs an agent-presets row')
  try {
    presets.get(name)
  } catch (error) {
    throw new LauncherUsageError(`dsh prompt show: ${(error as Error).message}`)
  }
  const preview: { tools: ToolSchema[]; prompt: unknown } = await presets.preview(name, where)
  return { tools: preview.tools, rendered: preview.prompt }
}

/**
 * The runtime context a new session in `cwd` would log first, gathered by the runtime-context row with its
 * own config (the `runtime-context/preview` event it declares) under the mode of `preset` (else the
 * default's): undefined when no such row is mounted.
 */
async function runtimeContext(
  tree: Awaited<ReturnType<typeof bootTree>>,
  cwd: string,
  preset: string | undefined,
): Promise<{ text: string; mode?: string } | undefined> {
  const root = tree.root as any
  const policy = root.get('sandboxPolicy')
  let mode: string | undefined
  if (preset) {
    const presets = root.get('permissionPresets')
    if (!presets) throw new LauncherUsageError('dsh prompt show: --permission needs a permission-presets row')
    try {
      mode = presets.get(preset).mode
    } catch (error) {
      throw new LauncherUsageError(`dsh prompt show: ${(error as Error).message}`)
    }
  } else if (policy) mode = policy.mode({ last: () => undefined, all: () => [] }) // a session that has logged nothing
  const authority =
    policy && mode ? { mode, writableRoots: [], paths: policy.pathRules([realpathSync(cwd)]) } : undefined
  const request: { cwd: string; where: object; result?: { text: string } } = {
    cwd,
    where: { ...(mode ? { mode } : {}), ...(authority ? { authority } : {}) },
  }
  await root.serial('runtime-context/preview', request)
  return request.result ? { text: request.result.text, ...(mode ? { mode } : {}) } : undefined
}

/**
 * The memory a new session in `cwd` would log first, read by the tool-memory row (the `memory/preview` event
 * it declares): undefined when no such row is mounted or both memory files are empty.
 */
async function memoryPreview(root: any, cwd: string): Promise<Omit<PromptPart, 'tokens'> | undefined> {
  const request: { cwd: string; result?: { files: any[]; content: { text: string }[] } } = { cwd }
  await root.serial('memory/preview', request)
  if (!request.result) return undefined
  const files = request.result.files.map((file: { scope: string; path: string; entries: string[]; bytes: number }) => ({
    scope: file.scope,
    path: file.path,
    entries: file.entries.length,
    bytes: file.bytes,
  }))
  return {
    kind: 'memory',
    name: 'memory',
    owner: '@dsh/tool-memory',
    text: request.result.content.map((block) => block.text).join('\n'),
    bytes: files.reduce((sum, file) => sum + file.bytes, 0),
    files,
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
  for (const part of report.parts.filter((item) => item.kind === 'context'))
    out.push(
      '',
      `## runtime context — ${part.owner}, ${part.tokens} tokens (the first message of a new session here${report.mode ? `, mode ${report.mode}` : ''})`,
      part.text,
    )
  for (const part of report.parts.filter((item) => item.kind === 'memory'))
    out.push(
      '',
      `## memory — ${part.owner}, ${part.tokens} tokens, ${part.bytes} bytes (read by every new session here: ${part.files!.map((file) => `${file.scope}: ${file.entries} ${file.entries === 1 ? 'entry' : 'entries'}, ${file.bytes} bytes, ${file.path}`).join('; ')})`,
      part.text,
    )
  return `${out.join('\n')}\n`
}

/** Runs `dsh prompt …`; returns the exit code. */
export async function promptCommand(
  rest: string[],
  options: Parameters<typeof promptReport>[0],
  stdout: NodeJS.WritableStream,
): Promise<number> {
  const args = parseShowArgs(rest)
  const report = await promptReport(options, {
    ...(args.permission ? { permission: args.permission } : {}),
    ...(args.agentPreset ? { agentPreset: args.agentPreset } : {}),
  })
  stdout.write(args.json ? `${JSON.stringify(report, null, 2)}\n` : format(report))
  return 0
}
