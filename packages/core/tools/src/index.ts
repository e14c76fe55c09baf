// The tool registry and pipeline (docs/architecture.md, "Tools").
export * from './types.ts'
export type {} from './events.ts'
export { Tools, Tools as default, type Config, type ToolFilter, type ToolReach } from './tools.ts'
export { PRE_EXECUTE_PHASES, type BatchOptions } from './pipeline.ts'
export { defineTool, Type, type DeclaredTool, type Static, type TObject, type TProperties } from './declare.ts'
export { printedText, type ToolOutputData } from './live-output.ts'
export { formatBytes, oversizedArguments } from './validate.ts'
export { stoppedByDsh } from './stopped.ts'
