import Schema from '@dsh/schemastery'

export interface Config {
  ripgrep: string
  maxResults: number
  maxMatchLines: number
  maxLineChars: number
  timeoutMs: number
  outputCapBytes: number
  fallbackSkip: string[]
  fallbackMaxFileBytes: number
}

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  ripgrep: Schema.string()
    .default('rg')
    .description(
      'The ripgrep executable: a name looked up on PATH at each call, or an absolute path. Empty, or not found: the built-in search is used.',
    ),
  maxResults: Schema.natural()
    .min(1)
    .default(200)
    .description('Most paths one glob, or one grep listing files or counts, returns (a note says how many more).'),
  maxMatchLines: Schema.natural()
    .min(1)
    .default(250)
    .description('Most lines (matches and context) one grep returns (a note says the rest were cut).'),
  maxLineChars: Schema.natural().min(1).default(300).description('Longer result lines are cut, with a note.'),
  timeoutMs: Schema.natural().min(1).default(30_000).description('Deadline of one search (ms).'),
  outputCapBytes: Schema.natural()
    .min(1)
    .default(4_000_000)
    .description('Bytes of ripgrep output read; results past them are cut with a note.'),
  fallbackSkip: Schema.array(Schema.string())
    .default(['.git', 'node_modules'])
    .description('Directory names the built-in search never enters (hidden entries are skipped too, as ripgrep does).'),
  fallbackMaxFileBytes: Schema.natural().min(1).default(4_000_000).description('The built-in grep skips larger files.'),
})
