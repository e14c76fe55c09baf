// What the model adapters (llm-deepseek, llm-openai, llm-anthropic) share, so each stays thin and none
// depends on another (docs/architecture.md "Models"). A library: it owns no key; `ctx.llm` is `@dsh/llm`.
export {
  baseUrlFrom,
  errorDetail,
  httpFailure,
  httpFailureCode,
  IdleWatchdog,
  retryAfterMs,
  sdkHeaders,
  transportFailure,
} from './http.ts'
export { fromCatalog, imageAsText, imageData } from './catalog.ts'
export { streamAttempt, type Attempt, type AttemptOptions } from './attempt.ts'
export { ChatCompletionsReader, chatUsage } from './chat-completions.ts'
