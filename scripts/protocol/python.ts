// Writes the protocol's titled schemas as Python TypedDicts (Python 3.9: no NotRequired, so a type with
// both required and optional keys is a required base class and a `total=False` subclass), its unions and
// enums as aliases, and its constants as module constants. Standard library only, like the Python SDK.
import type { Json, JsonObject } from './json-schema.ts'

export interface PythonModule {
  doc: string
  constants: [name: string, value: Json, comment?: string][]
  definitions: Map<string, JsonObject>
}

const pascal = (name: string) => name.replace(/(^|[^A-Za-z0-9])([A-Za-z0-9])/g, (_m, _s, c: string) => c.toUpperCase())

export function pythonModule(module: PythonModule): string {
  const out: string[] = []
  const emitted = new Set<string>()
  const inline = new Map<string, JsonObject>()

  /** The Python type of a schema; an untitled object gets a name from where it is (`SessionSummaryParent`). */
  const typeOf = (schema: JsonObject, context: string): string => {
    if (typeof schema.$ref === 'string') return String(schema.$ref).split('/').pop()!
    if ('const' in schema) return `Literal[${python(schema.const!)}]`
    if (Array.isArray(schema.enum)) return `Literal[${schema.enum.map(python).join(', ')}]`
    if (Array.isArray(schema.anyOf))
      return `Union[${(schema.anyOf as JsonObject[]).map((branch, index) => typeOf(branch, `${context}${index}`)).join(', ')}]`
    switch (schema.type) {
      case 'string':
        return 'str'
      case 'integer':
        return 'int'
      case 'number':
        return 'float'
      case 'boolean':
        return 'bool'
      case 'null':
        return 'None'
      case 'array':
        return `List[${typeOf(schema.items as JsonObject, `${context}Item`)}]`
      case 'object': {
        if (schema.properties) {
          const name = pascal(context)
          inline.set(name, schema)
          return name
        }
        const values = schema.patternProperties
          ? Object.values(schema.patternProperties as JsonObject)[0]
          : schema.additionalProperties
        return `Dict[str, ${values && typeof values === 'object' ? typeOf(values as JsonObject, `${context}Value`) : 'Any'}]`
      }
      default:
        return 'Any'
    }
  }

  const docstring = (text: Json | undefined, indent: string) =>
    typeof text === 'string' ? [`${indent}"""${text.replace(/\\/g, '\\\\').replace(/"""/g, '\\"\\"\\"')}"""`] : []

  const emitObject = (name: string, schema: JsonObject) => {
    const properties = (schema.properties ?? {}) as Record<string, JsonObject>
    const required = new Set((schema.required ?? []) as string[])
    const field = ([key, value]: [string, JsonObject]) => {
      const line = `    ${key}: ${typeOf(value, `${name}_${key}`)}`
      return typeof value.description === 'string' ? [`    #: ${value.description}`, line] : [line]
    }
    const must = Object.entries(properties).filter(([key]) => required.has(key))
    const may = Object.entries(properties).filter(([key]) => !required.has(key))
    const lines: string[] = []
    if (must.length && may.length) {
      lines.push(`class _${name}Required(TypedDict):`, ...must.flatMap(field), '', '')
      lines.push(
        `class ${name}(_${name}Required, total=False):`,
        ...docstring(schema.description, '    '),
        ...may.flatMap(field),
      )
    } else {
      lines.push(
        `class ${name}(TypedDict${may.length ? ', total=False' : ''}):`,
        ...docstring(schema.description, '    '),
        ...[...must, ...may].flatMap(field),
      )
      if (!must.length && !may.length && typeof schema.description !== 'string') lines.push('    pass')
    }
    return lines
  }

  // Dependencies first: an alias is evaluated when the module loads, so what it names must exist by then.
  const emit = (name: string, schema: JsonObject) => {
    if (emitted.has(name)) return
    emitted.add(name)
    for (const dependency of references(schema))
      if (module.definitions.has(dependency)) emit(dependency, module.definitions.get(dependency)!)
    const body =
      schema.type === 'object' && schema.properties
        ? emitObject(name, schema)
        : [
            `${name} = ${typeOf({ ...schema, title: undefined as unknown as Json }, name)}`,
            ...(typeof schema.description === 'string' ? [`"""${schema.description}"""`] : []),
          ]
    // Untitled objects met while typing this one come out just before it.
    const pending = [...inline.entries()].filter(([inlineName]) => !emitted.has(inlineName))
    for (const [inlineName, inlineSchema] of pending) {
      emitted.add(inlineName)
      out.push(...emitObject(inlineName, inlineSchema), '', '')
    }
    out.push(...body, '', '')
  }

  for (const [name, schema] of [...module.definitions.entries()].sort(([a], [b]) => a.localeCompare(b)))
    emit(name, schema)

  const constants = module.constants.flatMap(([name, value, comment]) => [
    ...(comment ? [`#: ${comment}`] : []),
    `${name} = ${python(value)}`,
  ])
  return [
    `"""${module.doc}"""`,
    '# Generated by scripts/protocol/generate.ts from the TypeBox declarations of @dsh/sdk-protocol.',
    '# Do not edit: change the declarations and run `npm run generate:protocol` (a gate checks this file is fresh).',
    'from __future__ import annotations',
    '',
    'from typing import Any, Dict, List, Literal, TypedDict, Union',
    '',
    ...constants,
    '',
    '',
    ...out,
  ]
    .join('\n')
    .replace(/\n{3,}$/, '\n')
    .replace(/\n*$/, '\n')
}

function references(schema: Json): string[] {
  if (Array.isArray(schema)) return schema.flatMap(references)
  if (!schema || typeof schema !== 'object') return []
  return Object.entries(schema).flatMap(([key, value]) =>
    key === '$ref' && typeof value === 'string' ? [value.split('/').pop()!] : references(value),
  )
}

function python(value: Json): string {
  if (value === null) return 'None'
  if (value === true) return 'True'
  if (value === false) return 'False'
  if (Array.isArray(value)) return `(${value.map(python).join(', ')}${value.length === 1 ? ',' : ''})`
  if (typeof value === 'object')
    return `{${Object.entries(value)
      .map(([key, item]) => `${JSON.stringify(key)}: ${python(item)}`)
      .join(', ')}}`
  return JSON.stringify(value)
}
