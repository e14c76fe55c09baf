export * from './line-schema.ts'
export { emptyRunUsage, lineText, notStartedResult, type ResultError } from './not-started.ts'
export { asksForRunLines, NOT_A_RUN } from './run-argv.ts'
