// @dsh/llm-mock-server: a local HTTP server speaking the real DeepSeek/OpenAI chat-completions and
// Anthropic messages wire formats, scripted per test (docs/architecture.md, "Models": "only the model is fake").
export { startMockServer } from './server.ts'
export { MockServerError, MockServerOptions, type OpenAIDialectChoice } from './options.ts'
export { checkReply, checkScript } from './script.ts'
export { serverTimeMs } from './timing.ts'
export type { MockReply, MockResponder, MockServer, MockToolCall, MockUsage, RecordedRequest } from './types.ts'
