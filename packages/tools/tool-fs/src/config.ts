import Schema from '@dsh/schemastery'

export interface Config {
  readLines: number
  readMaxBytes: number
  maxLineChars: number
  editContextLines: number
  maxSnippetLines: number
}

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  readLines: Schema.natural().min(1).default(2000).description('Lines one read returns when the model gives no limit.'),
  readMaxBytes: Schema.natural()
    .min(1)
    .default(40_000)
    .description(
      "Most bytes of text one read returns (the fs row's maxTextBytes is the ceiling); the read stops at a line end with a note saying where to continue. Keep it under spill-policy's thresholdBytes, or reads get spilled.",
    ),
  maxLineChars: Schema.natural().min(1).default(2000).description('Longer lines are cut in read results, with a note.'),
  editContextLines: Schema.natural().default(3).description('Lines shown around the changed region after an edit.'),
  maxSnippetLines: Schema.natural().min(1).default(40).description('Most lines of the snippet shown after an edit.'),
})
