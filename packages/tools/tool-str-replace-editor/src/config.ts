import Schema from '@dsh/schemastery'

export interface Config {
  viewLines: number
  viewMaxBytes: number
  maxLineChars: number
  maxEntries: number
  snippetContextLines: number
  maxSnippetLines: number
}

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  viewLines: Schema.natural().min(1).default(2000).description('Lines one view of a file returns without a view_range end (a note says how to see more).'),
  viewMaxBytes: Schema.natural()
    .min(1)
    .default(40_000)
    .description("Most bytes of text one view returns (the fs row's maxTextBytes is the ceiling). Keep it under spill-policy's thresholdBytes, or views get spilled."),
  maxLineChars: Schema.natural().min(1).default(2000).description('Longer lines are cut in views, with a note.'),
  maxEntries: Schema.natural().min(1).default(300).description('Most entries one view of a directory lists.'),
  snippetContextLines: Schema.natural().default(4).description('Lines shown around a change after str_replace and insert.'),
  maxSnippetLines: Schema.natural().min(1).default(40).description('Most lines of the snippet shown after a change (a note says what was left out).'),
})
