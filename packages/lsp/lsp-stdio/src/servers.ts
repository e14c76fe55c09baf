import { accessSync, constants, existsSync, readdirSync, realpathSync } from 'node:fs'
import { homedir } from 'node:os'
import { basename, delimiter, dirname, extname, isAbsolute, join } from 'node:path'
import Schema from '@dsh/schemastery'
import { within } from '@dsh/sandbox-rules'

/** One language's server as the settings describe it. */
export interface ServerConfig {
  /** The program and its arguments (a name found on PATH, or an absolute path). */
  command: string[]
  /** File extensions it serves, with the dot (`.ts`). */
  extensions: string[]
  /** Files or folders that mark a project's root (the nearest ancestor holding one, inside the workspace). */
  rootMarkers: string[]
  /** How to install the program, for the one-time notice when it is missing. */
  install: string
  /** The LSP language id per extension when it differs from the language's own id (`.tsx` → `typescriptreact`). */
  languageIds: Record<string, string>
  /** Sent as `initializationOptions`. */
  initializationOptions: Record<string, unknown>
  /** Leave this language out (a shipped default the user does not want). */
  disabled: boolean
}

export const ServerConfigSchema: Schema<Partial<ServerConfig>, ServerConfig> = Schema.object({
  command: Schema.array(Schema.string()).min(1).required().description('The program and its arguments.'),
  extensions: Schema.array(Schema.string().pattern(/^\.[^/\\]+$/))
    .min(1)
    .required()
    .description('File extensions it serves (`.ts`).'),
  rootMarkers: Schema.array(Schema.string()).default([]).description('Files that mark a project root.'),
  install: Schema.string().default('').description('How to install the program (shown once when it is missing).'),
  languageIds: Schema.dict(Schema.string()).default({}).description('LSP language id per extension.'),
  initializationOptions: Schema.dict(Schema.any()).default({}).description('Sent as initializationOptions.'),
  disabled: Schema.boolean().default(false).description('Leave this language out.'),
})

export const ServersSchema: Schema<Record<string, Partial<ServerConfig>>, Record<string, ServerConfig>> = Schema.dict(
  ServerConfigSchema,
)

const server = (value: Partial<ServerConfig> & Pick<ServerConfig, 'command' | 'extensions'>): ServerConfig => ({
  rootMarkers: [],
  install: '',
  languageIds: {},
  initializationOptions: {},
  disabled: false,
  ...value,
})

/** The servers shipped: each applies only when its program exists. */
export const DEFAULT_SERVERS: Record<string, ServerConfig> = {
  typescript: server({
    command: ['typescript-language-server', '--stdio'],
    extensions: ['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs'],
    rootMarkers: ['tsconfig.json', 'jsconfig.json', 'package.json'],
    install: 'npm install -g typescript-language-server typescript',
    languageIds: {
      '.tsx': 'typescriptreact',
      '.js': 'javascript',
      '.mjs': 'javascript',
      '.cjs': 'javascript',
      '.jsx': 'javascriptreact',
    },
    // No network inside the sandbox: automatic type acquisition could only fail.
    initializationOptions: { tsserver: { disableAutomaticTypingAcquisition: true } },
  }),
  python: server({
    command: ['pyright-langserver', '--stdio'],
    extensions: ['.py', '.pyi'],
    rootMarkers: ['pyrightconfig.json', 'pyproject.toml', 'setup.py', 'setup.cfg', 'requirements.txt'],
    install: 'npm install -g pyright',
  }),
  go: server({
    command: ['gopls'],
    extensions: ['.go'],
    rootMarkers: ['go.work', 'go.mod'],
    install: 'go install golang.org/x/tools/gopls@latest',
  }),
  rust: server({
    command: ['rust-analyzer'],
    extensions: ['.rs'],
    rootMarkers: ['Cargo.toml'],
    install: 'rustup component add rust-analyzer',
  }),
}

/**
 * rustup installs a proxy for every component (`rust-analyzer` → `rustup`) whether the component is installed
 * or not: the program counts only when a toolchain holds it.
 */
function realProgram(file: string): boolean {
  let target: string
  try {
    target = realpathSync(file)
  } catch {
    return false
  }
  if (basename(target) !== 'rustup' || basename(file) === 'rustup') return true
  const toolchains = join(process.env.RUSTUP_HOME ?? join(homedir(), '.rustup'), 'toolchains')
  try {
    return readdirSync(toolchains).some((toolchain) => existsSync(join(toolchains, toolchain, 'bin', basename(file))))
  } catch {
    return false
  }
}

/** The program's absolute path: `program` itself when it has a slash, else the first executable on `path`. */
export function findProgram(program: string, path: string | undefined): string | undefined {
  const executable = (file: string) => {
    try {
      accessSync(file, constants.X_OK)
      return true
    } catch {
      return false
    }
  }
  if (program.includes('/'))
    return isAbsolute(program) && executable(program) && realProgram(program) ? program : undefined
  for (const dir of (path ?? '').split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue
    const candidate = join(dir, program)
    if (executable(candidate) && realProgram(candidate)) return candidate
  }
  return undefined
}

/** The language whose extensions hold `path`'s, or undefined. */
export function languageFor(servers: Record<string, ServerConfig>, path: string): string | undefined {
  const extension = extname(path).toLowerCase()
  if (!extension) return undefined
  return Object.keys(servers).find((id) => servers[id]!.extensions.includes(extension))
}

/**
 * A file's project root: the nearest folder from the file's up to `workspace` holding one of `markers`
 * (`marked`), else `workspace`. A file outside the workspace is looked up to `/`, falling back to its own folder.
 */
export function projectRoot(file: string, workspace: string, markers: string[]): { root: string; marked: boolean } {
  const inWorkspace = within(file, workspace)
  let dir = dirname(file)
  for (;;) {
    if (markers.some((marker) => existsSync(join(dir, marker)))) return { root: dir, marked: true }
    if ((inWorkspace && dir === workspace) || dirname(dir) === dir) break
    dir = dirname(dir)
  }
  return { root: inWorkspace ? workspace : dirname(file), marked: false }
}
