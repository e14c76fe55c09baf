import { Type, type Static, type TObject, type TProperties } from '@sinclair/typebox'
import type { ToolDefinition } from './types.ts'

// TypeBox schemas are JSON Schema, so one declaration is the model's schema, ajv's input and (through
// `Static`) the TypeScript type of the arguments: they cannot drift apart.
export { Type, type Static, type TObject, type TProperties }

/** A tool whose `parameters` are a TypeBox object schema; `execute`, `summarize` and `needsApproval` get its type. */
export type DeclaredTool<P extends TObject> = Omit<ToolDefinition<Static<P>>, 'parameters'> & { parameters: P }

/**
 * Declares a tool from one argument schema. The schema is stored as plain JSON (TypeBox marks its
 * objects with symbol keys, which would otherwise ride along into the log and the request).
 */
export function defineTool<P extends TObject>(tool: DeclaredTool<P>): ToolDefinition<Static<P>> {
  return { ...tool, parameters: JSON.parse(JSON.stringify(tool.parameters)) as Record<string, unknown> }
}
