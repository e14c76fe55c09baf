import { readFileSync } from 'node:fs'
import { isMap, isScalar, LineCounter, parseDocument, type Document } from 'yaml'
import { SettingsError } from '@dsh/settings'

/** One top-level entry of the settings file: its plain value and the 1-based line of its key. */
export interface StoredSetting {
  value: unknown
  line: number
  /** The value is a YAML mapping (a nested style `model: { default: … }` where flat keys are expected). */
  nested: boolean
}

export interface SettingsFileText {
  text: string
  entries: Map<string, StoredSetting>
}

function fileError(file: string, line: number, problem: string): SettingsError {
  return new SettingsError('SETTINGS_FILE_INVALID', `${file}:${line}: ${problem}`, undefined, file, line)
}

function parse(text: string, file: string): { doc: Document; entries: Map<string, StoredSetting> } {
  const lines = new LineCounter()
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false })
  const lineOf = (offset: number | undefined) => (offset === undefined ? 1 : lines.linePos(offset).line)
  if (doc.errors.length) {
    const error = doc.errors[0]!
    throw fileError(file, lineOf(error.pos[0]), `malformed YAML: ${error.message.split('\n')[0]}`)
  }
  const entries = new Map<string, StoredSetting>()
  if (doc.contents === null) return { doc, entries }
  if (!isMap(doc.contents)) {
    throw fileError(
      file,
      lineOf(doc.contents.range?.[0]),
      'the settings file must be a mapping of dotted keys to values (`model.default: deepseek-v4-flash`)',
    )
  }
  for (const pair of doc.contents.items) {
    const keyNode = pair.key
    const line = lineOf(keyNode?.range?.[0])
    if (!isScalar(keyNode) || typeof keyNode.value !== 'string')
      throw fileError(file, line, 'a settings key must be a plain string such as `model.default`')
    const valueNode = pair.value as any
    entries.set(keyNode.value, { value: valueNode?.toJS ? valueNode.toJS(doc) : null, line, nested: isMap(valueNode) })
  }
  return { doc, entries }
}

/** Parses settings text (a flat YAML mapping). Malformed text is SETTINGS_FILE_INVALID naming file and line. */
export function parseSettings(text: string, file: string): Map<string, StoredSetting> {
  return parse(text, file).entries
}

/** Reads and parses the file; a missing file is an empty one. */
export function readSettingsFile(file: string): SettingsFileText {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'ENOENT') return { text: '', entries: new Map() }
    throw new SettingsError(
      'SETTINGS_FILE_INVALID',
      `${file}: cannot read the settings file (${error instanceof Error && 'code' in error ? error.code : error})`,
      undefined,
      file,
      undefined,
      {
        cause: error,
      },
    )
  }
  return { text, entries: parseSettings(text, file) }
}

const isPrimitive = (value: unknown) => value === null || ['string', 'number', 'boolean'].includes(typeof value)

/**
 * `text` with `key` set to `value` (or removed when `value` is undefined), edited through the YAML document
 * so the user's comments and ordering survive. A scalar replaced by a scalar keeps its inline comment.
 */
export function withSetting(text: string, file: string, key: string, value: unknown): string {
  const { doc } = parse(text, file)
  if (value === undefined) {
    doc.delete(key)
    return doc.toString()
  }
  const existing = doc.contents === null ? undefined : doc.get(key, true)
  if (isScalar(existing) && isPrimitive(value)) existing.value = value
  else doc.set(key, doc.createNode(value))
  return doc.toString()
}
