import { FsError } from '@dsh/fs'
import { ToolError } from '@dsh/tools'

/** An FsError as the error result the model reads; anything else passes through. */
export function asToolError(error: unknown): unknown {
  return error instanceof FsError ? new ToolError(error.code, error.message) : error
}
