import { Ajv, type ValidateFunction } from 'ajv'

const ajv = new Ajv({ allErrors: false, strict: false, useDefaults: true })

/** Compiles a tool's parameter schema; a schema that does not compile is a registration error. */
export function compileParameters(toolName: string, schema: Record<string, unknown>): ValidateFunction {
  try {
    return ajv.compile(schema)
  } catch (error) {
    throw new Error(`tool "${toolName}" has an invalid parameters schema: ${error instanceof Error ? error.message : error}`, { cause: error })
  }
}

/** A model-readable description of why arguments failed validation. */
export function describeErrors(validate: ValidateFunction): string {
  return (validate.errors ?? [])
    .map((error) => {
      const where = error.instancePath ? `"${error.instancePath.slice(1).replace(/\//g, '.')}"` : 'arguments'
      const params = error.params as { additionalProperty?: string; allowedValues?: unknown[] }
      // An enum names its values, so the model can pick a valid one without guessing.
      const extra =
        error.keyword === 'additionalProperties' ? ` ("${params.additionalProperty}")` : error.keyword === 'enum' ? `: ${params.allowedValues!.map((value) => JSON.stringify(value)).join(', ')}` : ''
      return `${where} ${error.message}${extra}`
    })
    .join('; ')
}
