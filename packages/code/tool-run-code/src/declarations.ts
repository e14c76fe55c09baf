// TypeScript declarations of the functions a program may call, made from the tools' JSON Schemas, so the
// model writes typed calls (docs/architecture.md, "Code mode").
import type { ToolDefinition } from '@dsh/tools'

type JsonSchema = Record<string, unknown>

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/
const key = (name: string) => (IDENTIFIER.test(name) ? name : JSON.stringify(name))
const oneLine = (text: string, max: number) => {
  const flat = text.replace(/\s+/g, ' ').trim().replaceAll('*/', '* /')
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}
const parenthesized = (type: string) => (/[|&]/.test(type) ? `(${type})` : type)

/** The TypeScript type of a JSON Schema (the subset tool schemas use; anything else is `unknown`). */
export function typeOf(schema: unknown, indent = ''): string {
  if (!schema || typeof schema !== 'object') return 'unknown'
  const s = schema as JsonSchema
  if ('const' in s) return JSON.stringify(s.const)
  if (Array.isArray(s.enum)) return s.enum.map((value) => JSON.stringify(value)).join(' | ')
  const union = (s.anyOf ?? s.oneOf) as unknown[] | undefined
  if (Array.isArray(union)) return [...new Set(union.map((part) => typeOf(part, indent)))].join(' | ')
  if (Array.isArray(s.type)) return s.type.map((type) => typeOf({ ...s, type }, indent)).join(' | ')
  switch (s.type) {
    case 'string':
      return 'string'
    case 'number':
    case 'integer':
      return 'number'
    case 'boolean':
      return 'boolean'
    case 'null':
      return 'null'
    case 'array':
      return `${parenthesized(typeOf(s.items, indent))}[]`
    case 'object':
      return objectType(s, indent)
    default:
      return 'unknown'
  }
}

function objectType(s: JsonSchema, indent: string): string {
  const properties = (s.properties ?? {}) as Record<string, JsonSchema>
  const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : [])
  const names = Object.keys(properties)
  if (!names.length) return s.additionalProperties === false ? '{}' : 'Record<string, unknown>'
  const inner = `${indent}  `
  const lines = names.map((name) => {
    const property = properties[name]!
    const doc = typeof property.description === 'string' ? `${inner}/** ${oneLine(property.description, 160)} */\n` : ''
    return `${doc}${inner}${key(name)}${required.has(name) ? '' : '?'}: ${typeOf(property, inner)}`
  })
  return `{\n${lines.join('\n')}\n${indent}}`
}

/**
 * One `declare function` per tool; a tool whose name is no identifier is reached as `tools["name"]` (every tool
 * is also in `tools`).
 */
export function declarations(tools: readonly ToolDefinition[], descriptionChars: number): string {
  const doc = (tool: ToolDefinition, indent = '') => `${indent}/** ${oneLine(tool.description, descriptionChars)} */`
  const direct = tools.filter((tool) => IDENTIFIER.test(tool.name))
  const quoted = tools.filter((tool) => !IDENTIFIER.test(tool.name))
  const lines = direct.map(
    (tool) => `${doc(tool)}\ndeclare function ${tool.name}(args: ${typeOf(tool.parameters)}): Promise<string>`,
  )
  if (quoted.length)
    lines.push(
      `declare const tools: {\n${quoted
        .map(
          (tool) =>
            `${doc(tool, '  ')}\n  ${JSON.stringify(tool.name)}(args: ${typeOf(tool.parameters, '  ')}): Promise<string>`,
        )
        .join('\n')}\n}`,
    )
  return lines.join('\n')
}
