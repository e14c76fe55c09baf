// The shipped turn driver (docs/architecture.md, "The turn").
export { default, type Config } from './loop.ts'
export { streamIntoLog, sleep } from './stream.ts'
