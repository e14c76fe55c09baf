import Schema from '@dsh/schemastery'

export interface Config {
  maxLineBytes: number
  excerptChars: number
  approvalTimeoutMs: number
  clientToolTimeoutMs: number
  pageSize: number
  maxPageSize: number
  searchLimit: number
  maxSearchLimit: number
  shutdownGraceMs: number
  guardStdout: boolean
}

export const Config: Schema<Config> = Schema.object({
  maxLineBytes: Schema.natural()
    .min(1024)
    .default(16 * 1024 * 1024)
    .description(
      'Longest line (one message) read from stdin, in bytes; a longer line is dropped and answered with INVALID_REQUEST (LINE_TOO_LONG).',
    ),
  excerptChars: Schema.natural()
    .min(1)
    .default(120)
    .description('Characters of an offending line quoted in a parse or size error.'),
  approvalTimeoutMs: Schema.natural()
    .default(120_000)
    .description(
      'An approval/request the client has not answered after this long is a rejection (0: wait until the turn is cancelled).',
    ),
  clientToolTimeoutMs: Schema.natural()
    .default(600_000)
    .description(
      'A tool/call the client has not answered after this long is a TOOL_TIMEOUT result (0: no deadline but the turn).',
    ),
  pageSize: Schema.natural()
    .min(1)
    .default(500)
    .description('Events per session/events page when the client gives no limit.'),
  maxPageSize: Schema.natural().min(1).default(10_000).description('Largest session/events page a client may ask for.'),
  searchLimit: Schema.natural()
    .min(1)
    .default(20)
    .description('Hits of a session/search when the client gives no limit.'),
  maxSearchLimit: Schema.natural().min(1).default(200).description('Most hits a client may ask session/search for.'),
  shutdownGraceMs: Schema.natural()
    .default(10_000)
    .description('On shutdown or EOF, how long running turns get to end after cancel before the runtime exits anyway.'),
  guardStdout: Schema.boolean()
    .default(true)
    .description(
      'Send anything else written to stdout (a stray console.log) to stderr, so stdout carries protocol only.',
    ),
})
