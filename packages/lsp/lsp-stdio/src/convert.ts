import { fileURLToPath } from 'node:url'
import type { Diagnostic, Location, Severity, SymbolEntry } from '@dsh/lsp'
import { SYMBOL_KINDS } from '@dsh/lsp'
import type {
  Diagnostic as LspDiagnostic,
  DocumentSymbol,
  Hover,
  Location as LspLocation,
  LocationLink,
  MarkedString,
  MarkupContent,
  SymbolInformation,
  WorkspaceSymbol,
} from 'vscode-languageserver-protocol/node.js'

const SEVERITIES: Severity[] = ['error', 'warning', 'information', 'hint']

/** A file URI as a path; undefined for another scheme (a server's virtual documents). */
export function pathOf(uri: string): string | undefined {
  if (!uri.startsWith('file:')) return undefined
  try {
    return fileURLToPath(uri)
  } catch {
    return undefined
  }
}

export const diagnosticOf = (d: LspDiagnostic): Diagnostic => ({
  line: d.range.start.line + 1,
  column: d.range.start.character + 1,
  endLine: d.range.end.line + 1,
  endColumn: d.range.end.character + 1,
  // LSP: a missing severity is the client's to interpret; an error is the safe reading.
  severity: SEVERITIES[(d.severity ?? 1) - 1] ?? 'error',
  message: d.message,
  ...(d.source ? { source: d.source } : {}),
  ...(d.code !== undefined ? { code: String(d.code) } : {}),
})

/** definition/references answers: a Location, an array of them, or LocationLinks; other schemes dropped. */
export function locationsOf(answer: LspLocation | LspLocation[] | LocationLink[] | null | undefined): Location[] {
  if (!answer) return []
  const list = Array.isArray(answer) ? answer : [answer]
  const out: Location[] = []
  for (const entry of list) {
    const uri = 'targetUri' in entry ? entry.targetUri : entry.uri
    const range = 'targetUri' in entry ? entry.targetSelectionRange : entry.range
    const path = pathOf(uri)
    if (!path) continue
    out.push({
      path,
      line: range.start.line + 1,
      column: range.start.character + 1,
      endLine: range.end.line + 1,
      endColumn: range.end.character + 1,
    })
  }
  return out
}

const kindOf = (kind: number) => SYMBOL_KINDS[kind - 1] ?? `kind ${kind}`

/** documentSymbol answers: hierarchical DocumentSymbols (flattened with their depth) or flat SymbolInformation. */
export function documentSymbolsOf(
  path: string,
  answer: (DocumentSymbol | SymbolInformation)[] | null | undefined,
): SymbolEntry[] {
  const out: SymbolEntry[] = []
  const walk = (symbols: DocumentSymbol[], depth: number, container?: string) => {
    for (const symbol of symbols) {
      out.push({
        name: symbol.name,
        kind: kindOf(symbol.kind),
        path,
        line: symbol.selectionRange.start.line + 1,
        column: symbol.selectionRange.start.character + 1,
        ...(container ? { container } : {}),
        depth,
      })
      if (symbol.children?.length) walk(symbol.children, depth + 1, symbol.name)
    }
  }
  for (const symbol of answer ?? []) {
    if ('selectionRange' in symbol) walk([symbol], 0)
    else out.push(...workspaceSymbolsOf([symbol]))
  }
  return out
}

export function workspaceSymbolsOf(answer: (SymbolInformation | WorkspaceSymbol)[] | null | undefined): SymbolEntry[] {
  const out: SymbolEntry[] = []
  for (const symbol of answer ?? []) {
    const path = pathOf(symbol.location.uri)
    if (!path) continue
    const start = 'range' in symbol.location ? symbol.location.range.start : { line: 0, character: 0 }
    out.push({
      name: symbol.name,
      kind: kindOf(symbol.kind),
      path,
      line: start.line + 1,
      column: start.character + 1,
      ...(symbol.containerName ? { container: symbol.containerName } : {}),
      depth: 0,
    })
  }
  return out
}

const markedText = (value: MarkedString | MarkupContent): string =>
  typeof value === 'string' ? value : 'kind' in value ? value.value : `\`\`\`${value.language}\n${value.value}\n\`\`\``

export function hoverText(answer: Hover | null | undefined): string {
  if (!answer) return ''
  const contents = answer.contents
  return (Array.isArray(contents) ? contents.map(markedText) : [markedText(contents)])
    .map((part) => part.trim())
    .filter(Boolean)
    .join('\n\n')
}
