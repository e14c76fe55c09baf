import Schema from '@dsh/schemastery'
import { diagnosticsConfig, type DiagnosticsConfig } from '@dsh/tool-kit'

export interface Config extends DiagnosticsConfig {
  readLines: number
  readMaxBytes: number
  readImageMaxBytes: number
  maxLineChars: number
  editContextLines: number
  maxSnippetLines: number
  closestMatchMinSimilarity: number
  closestMatchMaxFileLines: number
}

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  readLines: Schema.natural().min(1).default(2000).description('Lines one read returns when the model gives no limit.'),
  readMaxBytes: Schema.natural()
    .min(1)
    .default(40_000)
    .description(
      "Most bytes of text one read returns (the fs row's maxTextBytes is the ceiling); the read stops at a line end with a note saying where to continue. Keep it under spill-policy's thresholdBytes, or reads get spilled.",
    ),
  readImageMaxBytes: Schema.natural()
    .default(5_000_000)
    .description(
      "Largest image read shows the model (as an attachment; the attachments row's maxBytes applies too). Larger ones are described.",
    ),
  maxLineChars: Schema.natural().min(1).default(2000).description('Longer lines are cut in read results, with a note.'),
  editContextLines: Schema.natural()
    .default(3)
    .description('Unchanged lines shown around the change in the diff after an edit.'),
  maxSnippetLines: Schema.natural()
    .min(1)
    .default(40)
    .description('Most lines of the diff shown after an edit (a note says how many more).'),
  closestMatchMinSimilarity: Schema.number()
    .min(0)
    .max(1)
    .default(0.6)
    .description(
      'When old_string is not found, the closest stretch of the file is shown if it is at least this alike (0..1).',
    ),
  closestMatchMaxFileLines: Schema.natural()
    .default(20_000)
    .description(
      'Files longer than this are not scanned for the closest match (the scan is lines × old_string lines).',
    ),
  ...diagnosticsConfig,
})
