/**
 * A mistake in what the user gave us (a profile name, a patch file, a config value). The launcher prints
 * `message` alone and exits 2: never a stack trace for user error.
 */
export class CompositionError extends Error {
  override name = 'CompositionError'
  constructor(
    readonly problem: string,
    readonly file?: string,
    readonly line?: number,
    options?: ErrorOptions,
  ) {
    super(file ? `${file}${line ? `:${line}` : ''}: ${problem}` : problem, options)
  }
}

/** Where a piece of a patch came from: a file and a 1-based line. */
export interface Origin {
  file: string
  line: number
}

export function at(origin: Origin | undefined, problem: string): CompositionError {
  return new CompositionError(problem, origin?.file, origin?.line)
}
