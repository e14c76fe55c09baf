import { isAbsolute, relative, resolve } from 'node:path'
import type { Context } from '@dsh/cordis'
import { FsError } from '@dsh/fs'
import { LspError, type Location, type SymbolEntry } from '@dsh/lsp'
import type {} from '@dsh/sandbox-policy'
import Schema from '@dsh/schemastery'
import { defineTool, ToolError, Type, type Static, type ToolContext } from '@dsh/tools'

export interface Config {
  maxResults: number
  maxHoverChars: number
  maxLineChars: number
}

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  maxResults: Schema.natural().min(1).default(50).description('Most locations or symbols one call lists.'),
  maxHoverChars: Schema.natural().min(1).default(4000).description('Characters kept of a hover text.'),
  maxLineChars: Schema.natural().min(1).default(200).description('Characters kept of a location’s source line.'),
})

export const name = 'tool-lsp'
export const inject = ['tools', 'lsp', 'fs', 'sandboxPolicy']

export const OPERATIONS = ['definition', 'references', 'hover', 'documentSymbols', 'workspaceSymbols'] as const
type Operation = (typeof OPERATIONS)[number]
const AT_POSITION: readonly Operation[] = ['definition', 'references', 'hover']

/** The tool's arguments, declared once: the schema the model sees, the validator and `LspArgs`. */
export const lspArguments = Type.Object(
  {
    operation: Type.Unsafe<Operation>({
      type: 'string',
      enum: [...OPERATIONS],
      description: `One of: ${OPERATIONS.join(', ')}.`,
    }),
    path: Type.Optional(
      Type.String({
        description:
          'The file (relative to the workspace, or absolute). Needed by all but workspaceSymbols, where it picks the language (else every running server is asked).',
      }),
    ),
    line: Type.Optional(Type.Integer({ minimum: 1, description: 'definition, references, hover: 1-based line.' })),
    column: Type.Optional(
      Type.Integer({ minimum: 1, description: 'definition, references, hover: 1-based column of the symbol.' }),
    ),
    query: Type.Optional(Type.String({ description: 'workspaceSymbols: the name (or part of it) to look for.' })),
  },
  { additionalProperties: false },
)

export type LspArgs = Static<typeof lspArguments>

const shownPath = (cwd: string, path: string) => {
  const rel = relative(cwd, path)
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path
}

const need = <T>(value: T | undefined, field: string, operation: string): T => {
  if (value === undefined || value === '')
    throw new ToolError('INVALID_ARGS', `${operation} needs ${field}: give the ${field} argument`)
  return value
}

/**
 * The `lsp` tool (docs/architecture.md, "Language servers"): questions to the language server of a file.
 * Every file it reads for the server or to show a line is read through ctx.fs with the session's authority,
 * so a secret path is refused as `read` refuses it; a location in a file the authority hides is left out.
 * Registered only when at least one configured server's program exists.
 */
export function apply(ctx: Context, config: Config) {
  const available = ctx.lsp.languages().filter((language) => language.available)
  if (!available.length) {
    ctx.logger('lsp').debug('no language server program found: the lsp tool is not offered')
    return
  }
  const serves = available.map((language) => `${language.id}: ${language.extensions.join(' ')}`).join('; ')

  const read = async (path: string, context: ToolContext) => {
    const authority = await ctx.sandboxPolicy.authority(context.session)
    const bytes = await ctx.fs.readBytes(path, { authority })
    try {
      return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes)
    } catch {
      throw new ToolError('FS_BINARY', `${shownPath(context.cwd, path)} is not a UTF-8 text file`)
    }
  }

  /** Each location with its source line, files the authority hides left out (and counted). */
  const locations = async (found: Location[], context: ToolContext, what: string) => {
    if (!found.length) return `No ${what} found.`
    const texts = new Map<string, string | undefined>()
    const rows: string[] = []
    let hidden = 0
    for (const location of found.slice(0, config.maxResults)) {
      if (!texts.has(location.path)) texts.set(location.path, await read(location.path, context).catch(() => undefined))
      const text = texts.get(location.path)
      if (text === undefined) {
        hidden++
        continue
      }
      const line = (text.split('\n')[location.line - 1] ?? '').trim()
      const cut = line.length > config.maxLineChars ? line.slice(0, config.maxLineChars) + '…' : line
      rows.push(`${shownPath(context.cwd, location.path)}:${location.line}:${location.column}: ${cut}`)
    }
    const more = found.length > config.maxResults ? [`… and ${found.length - config.maxResults} more`] : []
    const left = hidden ? [`(${hidden} in files you may not read left out)`] : []
    return [...rows, ...more, ...left].join('\n') || `No ${what} found in files you may read.`
  }

  const symbols = (found: SymbolEntry[], context: ToolContext) => {
    if (!found.length) return 'No symbols found.'
    const rows = found
      .slice(0, config.maxResults)
      .map(
        (symbol) =>
          `${'  '.repeat(symbol.depth)}${symbol.name} (${symbol.kind}${symbol.container && !symbol.depth ? ` in ${symbol.container}` : ''}) ${shownPath(context.cwd, symbol.path)}:${symbol.line}:${symbol.column}`,
      )
    const more = found.length > config.maxResults ? [`… and ${found.length - config.maxResults} more`] : []
    return [...rows, ...more].join('\n')
  }

  ctx.tools.register(
    ctx,
    defineTool({
      name: 'lsp',
      description: [
        `Ask the language server of a file (${serves}).`,
        'definition: where the symbol at path:line:column is defined. references: its uses. hover: its type and documentation.',
        'documentSymbols: the outline of path. workspaceSymbols: symbols named like query in the project.',
        'line and column are 1-based, as read shows them. Edits and writes already report a file’s new errors.',
      ].join('\n'),
      parameters: lspArguments,
      concurrencySafe: true,
      summarize: (args: LspArgs) =>
        `lsp ${args.operation}${args.path ? ` ${args.path}` : ''}${args.line ? `:${args.line}:${args.column ?? 1}` : ''}${args.query ? ` ${args.query}` : ''}`,
      async execute(args: LspArgs, context) {
        const options = { session: context.session, signal: context.signal }
        try {
          if (args.operation === 'workspaceSymbols') {
            const query = need(args.query, 'query', args.operation)
            const near = args.path ? resolve(context.cwd, args.path) : undefined
            if (near) await read(near, context)
            return symbols(await ctx.lsp.workspaceSymbols(query, near, options), context)
          }
          const path = resolve(context.cwd, need(args.path, 'path', args.operation))
          if (!ctx.lsp.languageOf(path))
            throw new ToolError(
              'LSP_NO_SERVER',
              `No language server is configured for ${shownPath(context.cwd, path)}.`,
            )
          const text = await read(path, context)
          if (args.operation === 'documentSymbols')
            return symbols(await ctx.lsp.documentSymbols({ path, text }, options), context)
          if (!AT_POSITION.includes(args.operation))
            throw new ToolError(
              'INVALID_ARGS',
              `Unknown operation "${String(args.operation)}": use one of ${OPERATIONS.join(', ')}.`,
            )
          const at = {
            path,
            text,
            line: need(args.line, 'line', args.operation),
            column: need(args.column, 'column', args.operation),
          }
          if (args.operation === 'hover') {
            const hover = await ctx.lsp.hover(at, options)
            if (!hover) return 'No hover information.'
            return hover.length > config.maxHoverChars ? hover.slice(0, config.maxHoverChars) + '…' : hover
          }
          const found = await (args.operation === 'definition'
            ? ctx.lsp.definition(at, options)
            : ctx.lsp.references(at, options))
          return await locations(found, context, args.operation === 'definition' ? 'definition' : 'references')
        } catch (error) {
          if (error instanceof LspError) throw new ToolError(error.code, error.message)
          if (error instanceof FsError) throw new ToolError(error.code, error.message)
          throw error
        }
      },
    }),
  )
}
