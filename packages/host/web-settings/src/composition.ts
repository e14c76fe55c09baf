import type { CompositionRow } from '@dsh/web-protocol'
import { isMap, isSeq, parseDocument, type YAMLMap } from 'yaml'

/** `!!js` values stay their source text: the page shows them, nothing evaluates them here. */
const jsTag = { tag: 'tag:yaml.org,2002:js', resolve: (source: string) => ({ js: source }) }

function touchesOf(comment: string | null | undefined): string[] {
  return (comment ?? '')
    .split(/[;\n]/)
    .map((part) => part.trim())
    .filter(Boolean)
}

function rowOf(node: YAMLMap, first = false): CompositionRow {
  const plain = node.toJSON() as Record<string, unknown>
  // The parser folds the dump's header block into the first row's comment; the blank line separates them.
  const comment = first ? node.commentBefore?.split(/\n\s*\n/).at(-1) : node.commentBefore
  const row: CompositionRow = { id: String(plain.id), setBy: touchesOf(comment) }
  if (typeof plain.name === 'string') row.name = plain.name
  if (plain.disabled !== undefined) row.disabled = plain.disabled
  if (plain.config !== undefined) row.config = plain.config
  const children = node.get('children', true)
  if (isSeq(children)) row.children = children.items.filter(isMap).map((child) => rowOf(child as YAMLMap))
  return row
}

/**
 * The composed tree as structured rows, read back from the dump `ctx.app.dumpConfig()` prints (one source
 * of truth for the CLI and the page): each row with the layers that touched it, from the dump's comments.
 */
export function parseDump(text: string): { header: string[]; rows: CompositionRow[] } {
  const doc = parseDocument(text, { customTags: [jsTag] })
  const seq = doc.contents
  // The header block (launch facts, layers) ends at the first blank line.
  const leading = /^((?:#.*\n)*)\n/.exec(text)?.[1] ?? ''
  const header = leading
    .split('\n')
    .map((line) => line.replace(/^#\s?/, '').trim())
    .filter(Boolean)
  if (!isSeq(seq)) return { header, rows: [] }
  const rows = seq.items.filter(isMap).map((item, index) => rowOf(item as YAMLMap, index === 0))
  return { header, rows }
}
