import { chmodSync, readFileSync, statSync } from 'node:fs'
import { isMap, isScalar, LineCounter, parseDocument } from 'yaml'
import { CREDENTIAL_NAME_PATTERN, CredentialError } from '@dsh/credentials'

/** The only mode the credentials file may have: read and write for its owner alone. */
export const PRIVATE_MODE = 0o600

const invalid = (file: string, line: number, problem: string) =>
  new CredentialError('CREDENTIALS_FILE_INVALID', undefined, `${file}:${line}: ${problem}`)

/**
 * Reads `.credentials.yaml` text: a mapping of names to single values. Errors name file and line and never
 * quote the text (a malformed line may hold a secret). An empty value (`NAME:`) counts as unset.
 */
export function parseCredentials(text: string, file: string): Map<string, string> {
  const lines = new LineCounter()
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false })
  const lineOf = (offset: number | undefined) => (offset === undefined ? 1 : lines.linePos(offset).line)
  if (doc.errors.length) {
    const error = doc.errors[0]!
    throw invalid(file, lineOf(error.pos[0]), `malformed YAML (${error.code})`)
  }
  const values = new Map<string, string>()
  if (doc.contents === null) return values
  if (!isMap(doc.contents))
    throw invalid(
      file,
      lineOf(doc.contents.range?.[0]),
      'the credentials file must be a mapping of names to values (`DEEPSEEK_API_KEY: sk-…`)',
    )
  for (const { key, value } of doc.contents.items) {
    const line = lineOf((key as any)?.range?.[0])
    if (!isScalar(key) || typeof key.value !== 'string' || !CREDENTIAL_NAME_PATTERN.test(key.value)) {
      throw invalid(file, line, 'a key that is not a credential name (names look like DEEPSEEK_API_KEY)')
    }
    if (value === null || (isScalar(value) && value.value === null)) continue
    if (!isScalar(value)) throw invalid(file, line, `the value of ${key.value} must be a single string`)
    // A plain `0123` or `true` is kept as written, not as the number or boolean YAML would make of it.
    const text = typeof value.value === 'string' ? value.value : (value.source ?? String(value.value))
    if (text !== '') values.set(key.value, text)
  }
  return values
}

/**
 * Gives `file` mode 0600 if it is readable or writable by anyone but its owner. Returns the mode it had
 * when it was changed (for the warning), undefined when it was already private or does not exist.
 */
export function tightenMode(file: string): number | undefined {
  let mode: number
  try {
    mode = statSync(file).mode & 0o777
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'ENOENT') return undefined
    throw error
  }
  if ((mode & 0o077) === 0) return undefined
  chmodSync(file, PRIVATE_MODE)
  return mode
}

/** The file's text, or '' when it does not exist yet. */
export function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8')
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'ENOENT') return ''
    throw new CredentialError(
      'CREDENTIALS_FILE_INVALID',
      undefined,
      `${file}: cannot read the credentials file (${error instanceof Error && 'code' in error ? error.code : error})`,
      { cause: error },
    )
  }
}
