import Schema from '@dsh/schemastery'

export interface Config {
  summaryChars: number
  previewChars: number
  titleChars: number
  searchLimit: number
  progressOutputLines: number
}

export const Config: Schema<Config> = Schema.object({
  summaryChars: Schema.natural()
    .min(8)
    .default(80)
    .description('Characters of a tool call summary in progress and refusal lines.'),
  previewChars: Schema.natural()
    .min(8)
    .default(160)
    .description('Characters of a message, argument or result preview in `sessions show`.'),
  titleChars: Schema.natural()
    .min(8)
    .default(60)
    .description('Characters of the title or first prompt in `sessions list`.'),
  searchLimit: Schema.natural()
    .min(1)
    .default(20)
    .description('Sessions `sessions search` prints when no --limit is given.'),
  progressOutputLines: Schema.natural()
    .default(10)
    .description(
      "Lines of a running command's printed output shown in terminal progress (per call; the rest is in the session log). 0: none.",
    ),
})
