import Schema from '@dsh/schemastery'
import { diagnosticsConfig, type DiagnosticsConfig } from '@dsh/tool-kit'

export interface Config extends DiagnosticsConfig {
  viewLines: number
  viewMaxBytes: number
  maxLineChars: number
  maxEntries: number
  snippetContextLines: number
  maxSnippetLines: number
  undoDepth: number
  closestMatchMinSimilarity: number
  closestMatchMaxFileLines: number
}

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  viewLines: Schema.natural()
    .min(1)
    .default(2000)
    .description('Lines one view of a file returns without a view_range end (a note says how to see more).'),
  viewMaxBytes: Schema.natural()
    .min(1)
    .default(40_000)
    .description(
      "Most bytes of text one view returns (the fs row's maxTextBytes is the ceiling). Keep it under spill-policy's thresholdBytes, or views get spilled.",
    ),
  maxLineChars: Schema.natural().min(1).default(2000).description('Longer lines are cut in views, with a note.'),
  maxEntries: Schema.natural().min(1).default(300).description('Most entries one view of a directory lists.'),
  snippetContextLines: Schema.natural()
    .default(4)
    .description('Lines shown around a change after str_replace and insert.'),
  maxSnippetLines: Schema.natural()
    .min(1)
    .default(40)
    .description('Most lines of the snippet shown after a change (a note says what was left out).'),
  undoDepth: Schema.natural()
    .default(10)
    .description(
      'Earlier versions of each file undo_edit can go back to, per session (0: no undo). Kept in memory: they do not survive a restart.',
    ),
  closestMatchMinSimilarity: Schema.number()
    .min(0)
    .max(1)
    .default(0.6)
    .description(
      'When old_str is not found, the closest stretch of the file is shown if it is at least this alike (0..1).',
    ),
  closestMatchMaxFileLines: Schema.natural()
    .default(20_000)
    .description('Files longer than this are not scanned for the closest match.'),
  ...diagnosticsConfig,
})
