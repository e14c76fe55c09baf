import { type Context, Service } from '@dsh/cordis'
import type { Session } from '@dsh/session'

/** How bad a diagnostic is, as the server grades it (LSP's 1–4). */
export type Severity = 'error' | 'warning' | 'information' | 'hint'

/** One problem a server reports for a file. Lines and columns are 1-based (columns in UTF-16 units, as JavaScript strings count). */
export interface Diagnostic {
  line: number
  column: number
  endLine: number
  endColumn: number
  severity: Severity
  message: string
  /** The server's own tag (`ts`, `Pyright`), when it sends one. */
  source?: string
  /** The server's code for the problem (`2322`), when it sends one. */
  code?: string
}

/** A span in a file (absolute path, 1-based). */
export interface Location {
  path: string
  line: number
  column: number
  endLine: number
  endColumn: number
}

/** A symbol a server lists: a document's outline entry or a workspace search hit. */
export interface SymbolEntry {
  name: string
  /** LSP's symbol kind in words (`class`, `function`, `variable`, …). */
  kind: string
  path: string
  line: number
  column: number
  /** The enclosing symbol's name, when the server says it. */
  container?: string
  /** Nesting in a document outline (0 at the top); 0 for workspace hits. */
  depth: number
}

/** What an edit's file looks like to its server now. */
export type DiagnoseOutcome =
  /** No server is configured for this kind of file (nothing to say). */
  | { kind: 'none' }
  /**
   * A server is configured but cannot run (its program is missing, or it failed to start). `notice` is set
   * the first time in a session, naming what is missing and how to fix it; later calls leave it out.
   */
  | { kind: 'unavailable'; language: string; notice?: string }
  /** The file's diagnostics; `settled` is false when the wait ran out before the server went quiet. */
  | { kind: 'diagnostics'; language: string; server: string; diagnostics: Diagnostic[]; settled: boolean }

/** A language as configured: its id, the file extensions it covers and whether its program was found. */
export interface LanguageInfo {
  id: string
  extensions: string[]
  /** The configured program (argv[0]). */
  command: string
  /** The program exists (on PATH or at the given path). */
  available: boolean
}

export interface LspCallOptions {
  /** The session the call serves: its working directory bounds the project root, its authority confines the server. */
  session: Session
  signal: AbortSignal
}

/** A place in a file the caller has read (with its authority): the server is given `text` as the file's content. */
export interface TextPosition {
  path: string
  text: string
  /** 1-based. */
  line: number
  /** 1-based, UTF-16 units. */
  column: number
}

export type LspErrorCode = 'LSP_NO_SERVER' | 'LSP_UNAVAILABLE' | 'LSP_FAILED' | 'LSP_TIMEOUT'

/** A request a language server could not answer; the message names the language, the server and what failed. */
export class LspError extends Error {
  override name = 'LspError'
  constructor(
    readonly code: LspErrorCode,
    message: string,
    /** Nothing worth telling the model after an edit (a missing server outside a project of its language). */
    readonly quiet = false,
  ) {
    super(message)
  }
}

/** LSP's SymbolKind numbers (1–26) in words. */
export const SYMBOL_KINDS = [
  'file',
  'module',
  'namespace',
  'package',
  'class',
  'method',
  'property',
  'field',
  'constructor',
  'enum',
  'interface',
  'function',
  'variable',
  'constant',
  'string',
  'number',
  'boolean',
  'array',
  'object',
  'key',
  'null',
  'enum member',
  'struct',
  'event',
  'operator',
  'type parameter',
] as const

declare module '@dsh/cordis' {
  interface Context {
    lsp: LanguageServers
  }
}

/**
 * Language servers for the workspace's files (docs/architecture.md, "Language servers"). Owns: which server
 * serves a file, starting and stopping it, keeping it in step with the text callers give, and its answers as
 * 1-based diagnostics, locations and symbols. Must not own: reading files for the model (callers read under
 * their authority and pass the text), what the model is told, or where a file may be written.
 */
export abstract class LanguageServers extends Service {
  constructor(ctx: Context) {
    super(ctx, 'lsp')
  }

  /** Every configured language, with whether its program exists. */
  abstract languages(): LanguageInfo[]

  /** The configured language of `path` (by extension), or undefined. */
  abstract languageOf(path: string): string | undefined

  /**
   * `path` now holds `text` (just written): the server is told, and its diagnostics of that file are awaited
   * a bounded time. Never throws for a server's trouble: that is an `unavailable` outcome, told once.
   */
  abstract diagnose(path: string, text: string, options: LspCallOptions): Promise<DiagnoseOutcome>

  /** Where the symbol at `at` is defined. */
  abstract definition(at: TextPosition, options: LspCallOptions): Promise<Location[]>

  /** Every use of the symbol at `at`, its declaration included. */
  abstract references(at: TextPosition, options: LspCallOptions): Promise<Location[]>

  /** The server's hover text (markdown or plain) for `at`; empty when it has none. */
  abstract hover(at: TextPosition, options: LspCallOptions): Promise<string>

  /** The outline of a file the caller read. */
  abstract documentSymbols(file: { path: string; text: string }, options: LspCallOptions): Promise<SymbolEntry[]>

  /**
   * Symbols matching `query` in the project of `near` (a file of the language to ask), or in every project
   * whose server already runs for the session's workspace when `near` is absent.
   */
  abstract workspaceSymbols(query: string, near: string | undefined, options: LspCallOptions): Promise<SymbolEntry[]>
}
