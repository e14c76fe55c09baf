import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { Ajv, type ValidateFunction } from 'ajv'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { UsageError } from '@dsh/cmdline'

/** `--output-schema <file>`: the JSON Schema the run's final answer must satisfy. */
export interface OutputSchema {
  file: string
  /** The schema as the model is shown it (the file's JSON, re-serialized compactly). */
  text: string
  /** The answer parsed and checked: its value, or the first problems in words. */
  check(answer: string): { ok: true; value: unknown } | { ok: false; problem: string }
}

/**
 * Reads and compiles the schema before anything is created: an unreadable file, bad JSON or an invalid
 * schema is a usage error (exit 2) naming the file. Draft 2020-12 when the schema says so, else draft-07.
 */
export function loadOutputSchema(cwd: string, given: string): OutputSchema {
  const file = resolve(cwd, given)
  let schema: unknown
  try {
    schema = JSON.parse(readFileSync(file, 'utf8'))
  } catch (error) {
    throw new UsageError(
      `--output-schema ${given}: ${error instanceof SyntaxError ? `not JSON: ${error.message}` : (error as Error).message}`,
      { cause: error },
    )
  }
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema))
    throw new UsageError(`--output-schema ${given}: a JSON Schema is an object`)
  const draft2020 = String((schema as { $schema?: unknown }).$schema ?? '').includes('2020-12')
  let validate: ValidateFunction
  try {
    validate = (
      draft2020 ? new Ajv2020({ allErrors: true, strict: false }) : new Ajv({ allErrors: true, strict: false })
    ).compile(schema)
  } catch (error) {
    throw new UsageError(`--output-schema ${given}: not a valid JSON Schema: ${(error as Error).message}`, {
      cause: error,
    })
  }
  return {
    file,
    text: JSON.stringify(schema),
    check(answer) {
      let value: unknown
      try {
        value = JSON.parse(unfenced(answer))
      } catch (error) {
        return { ok: false, problem: `the answer is not JSON (${(error as Error).message})` }
      }
      if (validate(value)) return { ok: true, value }
      const problems = (validate.errors ?? [])
        .slice(0, 5)
        .map((e) => `${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}`)
      return { ok: false, problem: `the answer does not satisfy the schema: ${problems.join('; ')}` }
    },
  }
}

/** The task as sent: the user's words, then what the answer must be. Logged as the user message. */
export function withOutputInstruction(task: string, schema: OutputSchema): string {
  return `${task}\n\nWhen you are done, reply with only a JSON value (no prose, no code fence) that is valid against this JSON Schema:\n${schema.text}`
}

/** The one retry's message, naming what was wrong with the previous answer. */
export function retryInstruction(problem: string, schema: OutputSchema): string {
  return `Your final answer cannot be used: ${problem}. Reply again with only a JSON value valid against this JSON Schema:\n${schema.text}`
}

/** Models often fence JSON even when told not to: a single fenced block is read as its content. */
function unfenced(answer: string): string {
  const trimmed = answer.trim()
  const fenced = /^```[a-zA-Z]*\n([\s\S]*?)\n?```$/.exec(trimmed)
  return fenced ? fenced[1]! : trimmed
}
