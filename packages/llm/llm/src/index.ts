// The model seam's definition (docs/architecture.md, "Models"; DESIGN §7).
export * from './vocabulary.ts'
export { BlockAssembler, type AssembledMessage } from './assemble.ts'
export { Llm, Llm as default, type Config as LlmConfig, type LlmAdapter } from './service.ts'
export { findEncodingDrift, type RequestEncoder, type RequestGuard } from './boundary.ts'
export { baseUrlFrom, errorDetail, httpFailure, httpFailureCode, IdleWatchdog, retryAfterMs, sdkHeaders, transportFailure } from './http.ts'
export { fromCatalog, imageAsText, imageData } from './catalog.ts'
export { streamAttempt, type Attempt, type AttemptOptions } from './attempt.ts'
export { ChatCompletionsReader, chatUsage } from './chat-completions.ts'
