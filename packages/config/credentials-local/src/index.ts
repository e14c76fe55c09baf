import { mkdirSync, readFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, resolve } from 'node:path'
import writeFileAtomic from 'write-file-atomic'
import { parseDocument, type Document } from 'yaml'
import type { Context, Logger } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type {} from '@dsh/app'
import {
  assertCredentialName,
  CredentialError,
  Credentials,
  type CredentialSource,
  type CredentialStatus,
  redactSecrets,
} from '@dsh/credentials'
import { isSecretName } from '@dsh/env-policy'
import { readDotenv } from './dotenv-file.ts'
import { parseCredentials, PRIVATE_MODE, readText, tightenMode } from './home-file.ts'
import { FileSnapshot } from './snapshot.ts'

export interface Config {
  homeFile: string
  dotenvFile: string
  minRedactLength: number
}

interface Found {
  value?: string
  source: CredentialSource
  location?: string
}

// State lives in one mutable object: methods run with `this` bound to cordis' per-caller proxy.
interface State {
  /** Every value resolved, set or removed so far, to its name: `redact` replaces them all. */
  known: Map<string, string>
  /** Names resolved, described, set or removed: their current env and .env values are redacted too. */
  asked: Set<string>
  /** Names already warned about for being too short to redact. */
  warnedShort: Set<string>
  /** Writes run one after another so concurrent `set`s cannot lose each other's lines. */
  writes: Promise<unknown>
}

const HOME_DIR_MODE = 0o700

/**
 * Credentials from, in order: the process environment, `$DSH_HOME/.credentials.yaml` (kept at mode 0600),
 * then the workspace `.env`. Looked up on every call; values are never logged.
 */
export default class CredentialsLocal extends Credentials {
  static inject = ['app']
  static Config: Schema<Config> = Schema.object({
    homeFile: Schema.string()
      .default('.credentials.yaml')
      .description('The credentials file: relative to $DSH_HOME, or absolute. Kept at mode 0600.'),
    dotenvFile: Schema.string()
      .default('.env')
      .description('A dotenv file read last: relative to the workspace, or absolute; empty reads none.'),
    minRedactLength: Schema.natural()
      .default(8)
      .description(
        'Values shorter than this are not redacted (they would mangle ordinary text); a warning names the credential.',
      ),
  })

  readonly homeFile: string
  readonly dotenvFile: string | undefined
  private readonly state: State
  private readonly log: Logger
  private readonly home: FileSnapshot<Map<string, string>>
  private readonly dotenv: FileSnapshot<Map<string, string>> | undefined

  constructor(
    ctx: Context,
    private readonly config: Config,
  ) {
    super(ctx)
    this.log = ctx.logger('credentials')
    this.homeFile = resolve(ctx.app.home, config.homeFile)
    this.dotenvFile = config.dotenvFile ? resolve(ctx.app.cwd, config.dotenvFile) : undefined
    this.state = { known: new Map(), asked: new Set(), warnedShort: new Set(), writes: Promise.resolve() }
    this.home = new FileSnapshot(
      this.homeFile,
      (file) => {
        this.tighten()
        return parseCredentials(readFileSync(file, 'utf8'), file)
      },
      new Map(),
    )
    this.dotenv = this.dotenvFile ? new FileSnapshot(this.dotenvFile, readDotenv, new Map()) : undefined
    // Read once at start: a malformed file fails the boot, and a file others can read is tightened now.
    this.home.read()
  }

  async resolve(name: string): Promise<string | undefined> {
    return this.lookup(name).value
  }

  async describe(name: string): Promise<CredentialStatus> {
    const { source, location } = this.lookup(name)
    return { name, set: source !== 'missing', source, ...(location ? { location } : {}) }
  }

  async set(name: string, value: string): Promise<void> {
    assertCredentialName(name)
    if (typeof value !== 'string' || value === '' || /[\r\n\0]/.test(value)) {
      throw new CredentialError(
        'CREDENTIAL_VALUE_INVALID',
        name,
        `the value for ${name} must be a non-empty single line`,
      )
    }
    this.state.asked.add(name)
    this.remember(name, value)
    await this.edit((doc) => {
      doc.set(name, value)
      return true
    })
  }

  async remove(name: string): Promise<boolean> {
    assertCredentialName(name)
    this.state.asked.add(name)
    return this.edit((doc, current) => {
      const value = current.get(name)
      if (value !== undefined) this.remember(name, value)
      return doc.delete(name)
    })
  }

  redact(text: string): string {
    if (!text) return text
    return redactSecrets(text, this.secrets())
  }

  howToSet(name: string): string {
    const home = tildify(this.homeFile)
    const places = ['the environment', home, ...(this.dotenvFile ? [tildify(this.dotenvFile)] : [])]
    return `export it, or add "${name}: <value>" to ${home} (looked in ${places.join(', ')})`
  }

  private lookup(name: string): Found {
    assertCredentialName(name)
    this.state.asked.add(name)
    const found = this.find(name)
    if (found.value !== undefined) this.remember(name, found.value)
    return found
  }

  private find(name: string): Found {
    const env = process.env[name]
    if (env) return { value: env, source: 'env' }
    const stored = this.home.read().get(name)
    if (stored !== undefined) return { value: stored, source: 'home-file', location: this.homeFile }
    const dotenv = this.dotenv?.read().get(name)
    if (dotenv !== undefined) return { value: dotenv, source: 'dotenv', location: this.dotenvFile }
    return { source: 'missing' }
  }

  private remember(name: string, value: string): void {
    if (!this.state.known.has(value)) this.state.known.set(value, name)
  }

  /** value → name for everything `redact` must hide; never throws (it runs on error and log paths). */
  private secrets(): Map<string, string> {
    const all = new Map(this.state.known)
    const add = (name: string, value: string | undefined) => {
      if (value && !all.has(value)) all.set(value, name)
    }
    try {
      for (const [name, value] of this.home.read()) add(name, value)
    } catch {
      // A file that became unreadable: what was resolved before is still in `known`.
    }
    for (const name of this.state.asked) {
      add(name, process.env[name])
      try {
        add(name, this.dotenv?.read().get(name))
      } catch {
        // As above: an unreadable .env leaves the values already known.
      }
    }
    for (const [value, name] of all) {
      if (value.length >= this.config.minRedactLength) continue
      all.delete(value)
      if (this.state.warnedShort.has(name)) continue
      this.state.warnedShort.add(name)
      this.log.warn(
        '%s',
        `${name} is shorter than ${this.config.minRedactLength} characters and is not redacted from text`,
      )
    }
    // Every secret-looking variable of this process, asked about or not: a command run with
    // danger-full-access, or a file the model reads, may still show its value. Short ones are skipped
    // silently (nobody configured them as credentials, so a warning would be noise).
    for (const [name, value] of Object.entries(process.env)) {
      if (value && value.length >= this.config.minRedactLength && isSecretName(name) && !all.has(value))
        all.set(value, name)
    }
    return all
  }

  private tighten(): void {
    const was = tightenMode(this.homeFile)
    if (was !== undefined) {
      this.log.warn(
        '%s',
        `${this.homeFile} was accessible to others (mode ${was.toString(8).padStart(4, '0')}); its mode is now 0600`,
      )
    }
  }

  /** Re-reads the file, applies `change` to its YAML document (comments kept) and replaces it atomically. */
  private edit(change: (doc: Document, current: Map<string, string>) => boolean): Promise<boolean> {
    const task = this.state.writes.then(async () => {
      mkdirSync(dirname(this.homeFile), { recursive: true, mode: HOME_DIR_MODE })
      this.tighten()
      const text = readText(this.homeFile)
      // Refuse to rewrite a file we cannot read: it may hold secrets we would drop.
      const current = parseCredentials(text, this.homeFile)
      const doc = parseDocument(text)
      if (!change(doc, current)) return false
      await writeFileAtomic(this.homeFile, doc.toString(), { mode: PRIVATE_MODE })
      return true
    })
    this.state.writes = task.catch(() => undefined)
    return task
  }
}

function tildify(path: string): string {
  const home = homedir()
  return path.startsWith(home + '/') ? '~' + path.slice(home.length) : path
}
