import { Ajv, type ValidateFunction } from 'ajv'

const ajv = new Ajv({ allErrors: false, strict: false, useDefaults: true })

/** Compiles a tool's parameter schema; a schema that does not compile is a registration error. */
export function compileParameters(toolName: string, schema: Record<string, unknown>): ValidateFunction {
  try {
    return ajv.compile(schema)
  } catch (error) {
    throw new Error(
      `tool "${toolName}" has an invalid parameters schema: ${error instanceof Error ? error.message : error}`,
      { cause: error },
    )
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
        error.keyword === 'additionalProperties'
          ? ` ("${params.additionalProperty}")`
          : error.keyword === 'enum'
            ? `: ${params.allowedValues!.map((value) => JSON.stringify(value)).join(', ')}`
            : ''
      return `${where} ${error.message}${extra}`
    })
    .join('; ')
}

/** The size of a value as people read it: bytes, KiB or MiB with one decimal. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`
}

/**
 * Why a call's arguments are too large to run (their JSON over `maxBytes`, `tools.maxArgumentBytes`), naming
 * the largest field and what to do instead; undefined when they fit. Checked before the call runs: a huge
 * argument stays in the history, and the model must learn to send less (docs/architecture.md, "Context").
 */
export function oversizedArguments(tool: string, args: Record<string, unknown>, maxBytes: number): string | undefined {
  const bytes = Buffer.byteLength(JSON.stringify(args))
  if (bytes <= maxBytes) return undefined
  let largest: [string, number] | undefined
  for (const [key, value] of Object.entries(args)) {
    const size = Buffer.byteLength(typeof value === 'string' ? value : (JSON.stringify(value) ?? ''))
    if (!largest || size > largest[1]) largest = [key, size]
  }
  const what = largest ? `${largest[0]} is ${formatBytes(largest[1])}` : `the arguments are ${formatBytes(bytes)}`
  return (
    `${tool}: ${what} (${formatBytes(bytes)} of arguments as JSON), over tools.maxArgumentBytes (${formatBytes(maxBytes)}); the call did not run. ` +
    'Send less in one call: split the content over several calls under that size (write a first part, then add the rest with edit), or produce it with a command or script.'
  )
}
