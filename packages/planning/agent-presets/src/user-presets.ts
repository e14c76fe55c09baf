// User agent presets: `$DSH_HOME/presets/<name>.yaml`, read afresh when asked (small files, rarely many).
import { readdirSync, readFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml'
import { NAME_PATTERN, presetProblem, type ChosenAgentPreset } from './presets.ts'

/** A user preset file that cannot be used: the message names the file and the line. */
export class AgentPresetFileError extends Error {
  override name = 'AgentPresetFileError'
  readonly code = 'AGENT_PRESET_INVALID'
  constructor(
    readonly file: string,
    readonly line: number,
    problem: string,
  ) {
    super(`${file}:${line}: ${problem}`)
  }
}

const FIELDS = ['description', 'tools', 'compaction', 'plugins', 'direct'] as const

/** Where each of a user preset's `plugins` is written: the line of its name and of its config. */
export interface PluginLines {
  name: number
  config: number
}

// Kept beside the parsed preset (not in it: the preset is logged as the user wrote it) for errors found later.
const PLUGIN_LINES = new WeakMap<object, PluginLines[]>()

/** The lines of a parsed user preset's plugins (undefined for a built-in or a logged preset). */
export function pluginLinesOf(preset: object): PluginLines[] | undefined {
  return PLUGIN_LINES.get(preset)
}

/** Parses one preset file; every problem is an AgentPresetFileError at the line it is on. */
export function parsePresetFile(file: string, text: string): ChosenAgentPreset {
  const name = basename(file).replace(/\.ya?ml$/, '')
  if (!NAME_PATTERN.test(name))
    throw new AgentPresetFileError(file, 1, `the file name must be the preset's name (matching ${NAME_PATTERN})`)
  const lines = new LineCounter()
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true })
  const lineOf = (node: Node | null | undefined | unknown) =>
    lines.linePos((node as Node | undefined)?.range?.[0] ?? 0).line
  if (doc.errors.length)
    throw new AgentPresetFileError(
      file,
      lines.linePos(doc.errors[0]!.pos[0]).line,
      `malformed YAML: ${doc.errors[0]!.message.split('\n')[0]}`,
    )
  if (!isMap(doc.contents))
    throw new AgentPresetFileError(
      file,
      lineOf(doc.contents),
      'an agent preset is a mapping with description, tools { allow, deny } and compaction',
    )
  const preset: Record<string, unknown> = { name, description: '', tools: {}, compaction: true, source: file }
  for (const pair of doc.contents.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : ''
    if (!(FIELDS as readonly string[]).includes(key))
      throw new AgentPresetFileError(
        file,
        lineOf(pair.key),
        `"${key}" is not a field of an agent preset (${FIELDS.join(', ')})`,
      )
    preset[key] = (pair.value as Node | null)?.toJSON() ?? null
    const problem = presetProblem(preset)
    if (problem) throw new AgentPresetFileError(file, lineOf(pair.value ?? pair.key), problem)
    if (key === 'plugins' && isSeq(pair.value)) {
      const lines = pair.value.items.map((item) => {
        const at = (field: string) =>
          isMap(item) ? item.items.find((entry) => isScalar(entry.key) && entry.key.value === field) : undefined
        return { name: lineOf(at('name')?.value ?? item), config: lineOf(at('config')?.value ?? item) }
      })
      PLUGIN_LINES.set(preset, lines)
    }
  }
  return preset as unknown as ChosenAgentPreset
}

/** Every preset file of `folder` (none when it does not exist), sorted by name. */
export function readUserPresets(folder: string): ChosenAgentPreset[] {
  let names: string[]
  try {
    names = readdirSync(folder).filter((entry) => /\.ya?ml$/.test(entry))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
  return names.sort().map((entry) => parsePresetFile(join(folder, entry), readFileSync(join(folder, entry), 'utf8')))
}
