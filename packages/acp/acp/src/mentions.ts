import { basename } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { ContentBlock } from '@agentclientprotocol/sdk'

/**
 * An editor's mentions as the model reads them, and back (docs/architecture.md, "ACP"): a linked file or
 * selection becomes one text block `[referenced: <path> (lines a-b) — <title>]`, an embedded one
 * `<context source="<path>" lines="a-b" title="…">…</context>`. The log keeps that text (it is what the
 * model saw); a replay after `session/load` turns a block that is exactly one such mention back into the
 * resource link or resource the editor sent, so the editor shows a mention rather than the markup.
 */

export interface Mention {
  /** A path for `file://` URIs (what the model passes to its tools), else the URI. */
  where: string
  lines?: { start: number; end: number }
  title?: string
}

/** `#L2`, `#L2-5`, `#L2:5`, `#L2-L5`: the line range a selection's URI names. */
const RANGE = /^#L(\d+)(?:[-:]L?(\d+))?$/

/** Where a URI points, and the line range its fragment names (`file:///a.ts#L1:10`). */
export function mentionOf(uri: string, label?: string | null): Mention {
  let where = uri
  let lines: Mention['lines']
  if (uri.startsWith('file://')) {
    try {
      const url = new URL(uri)
      const range = RANGE.exec(url.hash)
      if (range) lines = { start: Number(range[1]), end: Number(range[2] ?? range[1]) }
      url.hash = ''
      where = fileURLToPath(url)
    } catch {
      where = uri
    }
  }
  // A label that only repeats the file's name says nothing.
  const title = label && label !== basename(where) && !uri.endsWith(label) ? label : undefined
  return { where, ...(lines ? { lines } : {}), ...(title ? { title } : {}) }
}

const linesText = (lines: Mention['lines']) =>
  lines ? (lines.start === lines.end ? `${lines.start}` : `${lines.start}-${lines.end}`) : ''
const attribute = (text: string) => text.replaceAll('&', '&amp;').replaceAll('"', '&quot;')
const unattribute = (text: string) => text.replaceAll('&quot;', '"').replaceAll('&amp;', '&')

export function linkText(mention: Mention): string {
  return `[referenced: ${mention.where}${mention.lines ? ` (lines ${linesText(mention.lines)})` : ''}${mention.title ? ` — ${mention.title}` : ''}]`
}

export function contextText(mention: Mention, text: string): string {
  const lines = mention.lines ? ` lines="${linesText(mention.lines)}"` : ''
  const title = mention.title ? ` title="${attribute(mention.title)}"` : ''
  return `<context source="${attribute(mention.where)}"${lines}${title}>\n${text}\n</context>`
}

const LINK = /^\[referenced: (.+?)(?: \(lines (\d+)(?:-(\d+))?\))?(?: — (.+))?\]$/s
const CONTEXT =
  /^<context source="([^"]*)"(?: lines="(\d+)(?:-(\d+))?")?(?: title="([^"]*)")?>\n([\s\S]*)\n<\/context>$/

function uriOf(where: string, start?: string, end?: string): string {
  const base = where.startsWith('/') ? pathToFileURL(where).href : where
  return start ? `${base}#L${start}:${end ?? start}` : base
}

/** A replayed text block that is exactly one mention, as the block the editor sent; else undefined. */
export function mentionBlock(text: string): ContentBlock | undefined {
  const link = LINK.exec(text)
  if (link) {
    const [, where, start, end, title] = link
    return {
      type: 'resource_link',
      uri: uriOf(where!, start, end),
      name: basename(where!),
      ...(title ? { title } : {}),
    }
  }
  const context = CONTEXT.exec(text)
  if (context) {
    const [, source, start, end, , body] = context
    return { type: 'resource', resource: { uri: uriOf(unattribute(source!), start, end), text: body! } }
  }
  return undefined
}
