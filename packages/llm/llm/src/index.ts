// The model seam (docs/architecture.md, "Models"): a service. What adapters share is @dsh/llm-kit.
export * from './vocabulary.ts'
export { BlockAssembler, type AssembledMessage } from './assemble.ts'
export { Llm, Llm as default, type Config as LlmConfig, type LlmAdapter } from './service.ts'
export { findEncodingDrift, frozenCopy, isSealed, seal, type RequestEncoder, type RequestGuard } from './boundary.ts'
