import Schema from '@dsh/schemastery'

export interface Config {
  summaryChars: number
  outputLines: number
  diffLines: number
  historyLimit: number
  completionRows: number
  pickerRows: number
  exitWindowMs: number
  maxFps: number
}

export const Config: Schema<Config> = Schema.object({
  summaryChars: Schema.natural().min(8).default(100).description("Characters of a tool call's one-line summary."),
  outputLines: Schema.natural()
    .default(8)
    .description("Lines of a command's output a tool card shows (its tail; the whole output is in the log)."),
  diffLines: Schema.natural().min(1).default(12).description('Lines of a proposed edit or write a card shows.'),
  historyLimit: Schema.natural()
    .default(500)
    .description('Messages kept in the per-workspace input history ($DSH_HOME/tui/history.jsonl). 0: no history file.'),
  completionRows: Schema.natural().min(1).default(8).description('Rows the `/` completion list shows at most.'),
  pickerRows: Schema.natural().min(1).default(20).description('Sessions the resume picker lists at most.'),
  exitWindowMs: Schema.natural().default(2000).description('A second Ctrl+C within this many milliseconds exits.'),
  maxFps: Schema.natural().min(1).default(30).description('Most redraws of the live region per second.'),
})
