import Schema from '@dsh/schemastery'

/**
 * Which OpenAI-compatible dialect the chat-completions endpoints speak. `by-path`: `/chat/completions`
 * (DeepSeek's base URL has no /v1) is DeepSeek, `/v1/chat/completions` (the OpenAI SDK's base) is OpenAI.
 */
export type OpenAIDialectChoice = 'by-path' | 'deepseek' | 'openai'

export interface MockServerOptions {
  port: number
  host: string
  chunkChars: number
  toolArgumentPieces: number
  models: string[]
  repeat: boolean
  charsPerToken: number
  contextWindowTokens: number
  openaiDialect: OpenAIDialectChoice
  waitTimeoutMs: number
}

export const MockServerOptions: Schema<MockServerOptions> = Schema.object({
  port: Schema.natural().max(65535).default(0).description('TCP port; 0 picks a free one.'),
  host: Schema.string().default('127.0.0.1').description('Interface to bind; loopback unless a test needs otherwise.'),
  chunkChars: Schema.natural()
    .min(1)
    .default(4)
    .description('Characters per streamed chunk when text or reasoning is given as one string.'),
  toolArgumentPieces: Schema.natural()
    .min(1)
    .default(3)
    .description("Deltas a tool call's arguments JSON is split into when the call does not say."),
  models: Schema.array(Schema.string())
    .default(['deepseek-v4-flash', 'deepseek-v4-pro'])
    .description('Model ids listed by GET /models; the first answers requests that name no model.'),
  repeat: Schema.boolean()
    .default(false)
    .description('When nothing is queued and no responder is set, answer with the last reply again (benchmarks).'),
  charsPerToken: Schema.natural()
    .min(1)
    .default(4)
    .description('Characters per token when a reply gives no usage and the server estimates it.'),
  contextWindowTokens: Schema.natural()
    .min(1)
    .default(1_000_000)
    .description('The window named in the scripted "context too long" errors.'),
  openaiDialect: Schema.union(['by-path', 'deepseek', 'openai'] as const)
    .default('by-path')
    .description('Which OpenAI-compatible dialect the chat-completions endpoints speak.'),
  waitTimeoutMs: Schema.natural().default(30_000).description('Default deadline of waitForRequests().'),
})

/** Validates options (unknown keys are a mistake, not something to ignore) and fills the defaults. */
export function resolveOptions(input: Partial<MockServerOptions> = {}): MockServerOptions {
  const known = Object.keys(MockServerOptions.dict ?? {})
  const unknown = Object.keys(input).filter((key) => !known.includes(key))
  if (unknown.length)
    throw new MockServerError(
      'MOCK_BAD_OPTIONS',
      `llm-mock-server: unknown option(s) ${unknown.join(', ')} (known: ${known.join(', ')})`,
    )
  try {
    return MockServerOptions(input as MockServerOptions)
  } catch (error) {
    throw new MockServerError('MOCK_BAD_OPTIONS', `llm-mock-server: bad options: ${(error as Error).message}`)
  }
}

/** A mistake in how the mock server was started or scripted. `code` says which kind. */
export class MockServerError extends Error {
  constructor(
    public code: 'MOCK_BAD_OPTIONS' | 'MOCK_BAD_SCRIPT' | 'MOCK_TIMEOUT',
    message: string,
  ) {
    super(message)
    this.name = 'MockServerError'
  }
}
