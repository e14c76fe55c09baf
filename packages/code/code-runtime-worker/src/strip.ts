// Types stripped by TypeScript's own `transpileModule` (decision 2026-12-02-code-mode): pure JavaScript (no
// native binary or helper process, unlike esbuild's service), already in the tree, with a source map that
// takes a position in the emitted program back to the model's code. Loaded on the first program only.
import type { CodePosition } from '@dsh/code-runtime'

/** The program as it runs: the model's body inside an async function, so `await` and `return` work at top level. */
const HEADER = "(async function () { 'use strict';\n"
const FOOTER = '\n})'

export interface StrippedProgram {
  js: string
  /** The position in the model's code of a position (1-based) in `js`, when the map knows it. */
  original(line: number, column: number): CodePosition | undefined
}

export type StripOutcome =
  { ok: true; program: StrippedProgram } | { ok: false; message: string; position: CodePosition }

type TypeScript = typeof import('typescript')
type SourceMapJs = typeof import('source-map-js')
let loaded: Promise<[TypeScript, SourceMapJs]> | undefined
const load = () =>
  (loaded ??= Promise.all([
    import('typescript').then((module) => ((module as { default?: TypeScript }).default ?? module) as TypeScript),
    import('source-map-js') as Promise<SourceMapJs>,
  ]))

/** Strips the types of the model's code; a syntax error names its line and column in that code. */
export async function stripTypes(code: string): Promise<StripOutcome> {
  const [ts, sourceMap] = await load()
  const wrapped = HEADER + code + FOOTER
  const output = ts.transpileModule(wrapped, {
    fileName: 'program.ts',
    reportDiagnostics: true,
    compilerOptions: {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      sourceMap: true,
      inlineSources: false,
      removeComments: false,
    },
  })
  const problem = output.diagnostics?.find((diagnostic) => diagnostic.category === ts.DiagnosticCategory.Error)
  if (problem) {
    const at =
      problem.file && problem.start !== undefined
        ? problem.file.getLineAndCharacterOfPosition(problem.start)
        : undefined
    const message = ts.flattenDiagnosticMessageText(problem.messageText, '\n')
    return { ok: false, message, position: userPosition((at?.line ?? 1) + 1, (at?.character ?? 0) + 1) }
  }
  const consumer = new sourceMap.SourceMapConsumer(JSON.parse(output.sourceMapText!))
  return {
    ok: true,
    program: {
      js: output.outputText,
      original(line, column) {
        const found = consumer.originalPositionFor({ line, column: Math.max(0, column - 1) })
        return found.line === null ? undefined : userPosition(found.line, (found.column ?? 0) + 1)
      },
    },
  }
}

/** A position in the wrapped source as one in the model's code (the header is one line of its own). */
function userPosition(line: number, column: number): CodePosition {
  return { line: Math.max(1, line - 1), column }
}
