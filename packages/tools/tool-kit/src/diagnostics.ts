import { relative } from 'node:path'
import type { Context } from '@dsh/cordis'
import type { DiagnoseOutcome, Diagnostic } from '@dsh/lsp'
import Schema from '@dsh/schemastery'
import type { Session } from '@dsh/session'

// After a file tool changes a file, the tool result carries what the file's language server now reports
// (docs/architecture.md, "Language servers"). Optional: without a ctx.lsp row nothing is added.

const RANK = { error: 0, warning: 1, information: 2, hint: 3 } as const

export interface DiagnosticsNoteOptions {
  /** Most diagnostic lines shown; the rest are counted. */
  maxLines: number
  /** Characters kept of one message (its first line). */
  maxMessageChars: number
}

/** The two settings of a file tool's row that shape the note (tool-fs and the editor declare both). */
export interface DiagnosticsConfig {
  diagnosticsMaxLines: number
  diagnosticsMessageChars: number
}

/** Their schemas, spread into the row's `Schema.object({ … })`. */
export const diagnosticsConfig = {
  diagnosticsMaxLines: Schema.natural()
    .min(1)
    .default(20)
    .description(
      "Most diagnostic lines (errors first, then warnings) a language server's report adds to a changed file's result (with a ctx.lsp row).",
    ),
  diagnosticsMessageChars: Schema.natural()
    .min(1)
    .default(300)
    .description('Characters kept of one diagnostic message.'),
}

/** The note's options from such a row's config. */
export const diagnosticsOptions = (config: DiagnosticsConfig): DiagnosticsNoteOptions => ({
  maxLines: config.diagnosticsMaxLines,
  maxMessageChars: config.diagnosticsMessageChars,
})

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`

/** The outcome as the model reads it, after the tool's own result; '' when there is nothing to say. */
export function formatDiagnostics(shown: string, outcome: DiagnoseOutcome, options: DiagnosticsNoteOptions): string {
  if (outcome.kind === 'none') return ''
  if (outcome.kind === 'unavailable') return outcome.notice ? `\n\n[${outcome.notice}]` : ''
  const listed = outcome.diagnostics
    .filter((d) => d.severity === 'error' || d.severity === 'warning')
    .sort((a, b) => RANK[a.severity] - RANK[b.severity] || a.line - b.line || a.column - b.column)
  const errors = listed.filter((d) => d.severity === 'error').length
  const unfinished = outcome.settled ? '' : ' (the wait ran out before the server finished)'
  if (!outcome.diagnostics.length && !outcome.settled)
    return `\n\n[${outcome.server}: no diagnostics for ${shown} yet${unfinished}.]`
  if (!listed.length) return `\n\n[${outcome.server}: no errors in ${shown}${unfinished}.]`
  const counts = [
    errors && plural(errors, 'error'),
    listed.length - errors && plural(listed.length - errors, 'warning'),
  ]
    .filter(Boolean)
    .join(', ')
  const line = (d: Diagnostic) => {
    const message = d.message.split('\n')[0]!.trim()
    const cut = message.length > options.maxMessageChars ? message.slice(0, options.maxMessageChars) + '…' : message
    const code = d.code ? ` ${d.source ?? ''}${d.source ? ' ' : ''}${d.code}` : ''
    return `${shown}:${d.line}:${d.column} ${d.severity}${code}: ${cut}`
  }
  const rows = listed.slice(0, options.maxLines).map(line)
  const more = listed.length > options.maxLines ? [`… and ${listed.length - options.maxLines} more`] : []
  return `\n\n${outcome.server} reports ${counts} in ${shown}${unfinished}:\n${[...rows, ...more].join('\n')}`
}

/**
 * What the file's language server says about `file` now that it holds `text`, formatted for the tool result
 * (the leading blank line included), or '' when no ctx.lsp is mounted or nothing serves the file.
 */
export async function diagnosticsNote(
  ctx: Context,
  file: string,
  text: string,
  context: { session: Session; cwd: string; signal: AbortSignal },
  options: DiagnosticsNoteOptions,
): Promise<string> {
  const lsp = ctx.get('lsp')
  if (!lsp || !lsp.languageOf(file)) return ''
  const shown = relative(context.cwd, file).startsWith('..') ? file : relative(context.cwd, file)
  const outcome = await lsp
    .diagnose(file, text, { session: context.session, signal: context.signal })
    .catch((error: Error): DiagnoseOutcome => ({ kind: 'unavailable', language: '', notice: error.message }))
  return formatDiagnostics(shown, outcome, options)
}
