export type { LogEvent, ViewChange } from './items.ts'
// The item shapes: their schemas (`…Schema`, for the SDK protocol) and their types (`Item`, `ToolItem`, …).
export * from './shapes.ts'
export { pathOf, proposedChange } from './change.ts'
export { retryInfoOf, retryText, retryWords, waitText, type RetryWords } from './retry.ts'
export { SessionView } from './view.ts'
export { commandEnding } from './ending.ts'
