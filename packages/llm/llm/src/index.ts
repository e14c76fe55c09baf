// The model seam's definition (docs/architecture.md, "Models"; DESIGN §7).
export * from './vocabulary.ts'
export { BlockAssembler, type AssembledMessage } from './assemble.ts'
export { Llm, Llm as default, type LlmAdapter } from './service.ts'
export { errorDetail, httpFailure, httpFailureCode, IdleWatchdog, retryAfterMs } from './http.ts'
