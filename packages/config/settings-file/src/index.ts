import { mkdir } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'
import writeFileAtomic from 'write-file-atomic'
import type { Context } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type {} from '@dsh/app'
import {
  assertSettingKey,
  type DefineOptions,
  type SettingEntry,
  SettingsError,
  SettingsService,
  type SettingSource,
  type SettingValue,
  type UnclaimedSetting,
} from '@dsh/settings'
import { parseSettings, readSettingsFile, type StoredSetting, withSetting } from './settings-yaml.ts'

export interface Config {
  file: string
}

interface Definition {
  schema: Schema
  description: string
  fallback: unknown
  value: unknown
  source: SettingSource
}

// State lives in one mutable object: methods run with `this` bound to cordis' per-caller proxy.
interface State {
  stored: Map<string, StoredSetting>
  defined: Map<string, Definition>
  /** Writes run one after another so concurrent `set`s cannot lose each other's lines. */
  writes: Promise<unknown>
}

const messageOf = (error: unknown) => String((error as any)?.message ?? error)
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/**
 * Settings kept in `$DSH_HOME/settings.yaml`, a flat mapping of dotted keys (`model.default: …`). The file
 * is read once at start; each value is validated when a plugin defines its key (the only moment its schema
 * is known), so a bad value fails the defining plugin, and with it the boot, naming file, line and key.
 */
export default class SettingsFile extends SettingsService {
  static inject = ['app']
  static Config: Schema<Config> = Schema.object({
    file: Schema.string()
      .default('settings.yaml')
      .description('The settings file: relative to $DSH_HOME, or absolute.'),
  })

  readonly file: string
  private readonly state: State

  constructor(ctx: Context, config: Config) {
    super(ctx)
    this.file = resolve(ctx.app.home, config.file)
    this.state = { stored: readSettingsFile(this.file).entries, defined: new Map(), writes: Promise.resolve() }
  }

  define<K extends string>(key: K, schema: Schema<any, SettingValue<K>>, options: DefineOptions = {}): () => void {
    assertSettingKey(key)
    return this.ctx.effect(() => {
      const { defined } = this.state
      if (defined.has(key))
        throw new SettingsError('SETTINGS_DUPLICATE', `setting "${key}" is already defined by another plugin`, key)
      const fallback = schema(undefined)
      if (fallback === undefined)
        throw new SettingsError('SETTINGS_NO_DEFAULT', `setting "${key}" needs a schema with a default`, key)
      this.refuseNested(key)
      const stored = this.state.stored.get(key)
      const entry: Definition = {
        schema,
        description:
          options.description ?? (typeof schema.meta?.description === 'string' ? schema.meta.description : ''),
        fallback,
        value: stored ? this.validateStored(key, schema, stored) : fallback,
        source: stored ? 'file' : 'default',
      }
      defined.set(key, entry)
      return () => {
        if (defined.get(key) === entry) defined.delete(key)
      }
    }, `settings.define(${key})`) as () => void
  }

  get<K extends string>(key: K): SettingValue<K> {
    return this.definitionOf(key).value as SettingValue<K>
  }

  async set<K extends string>(key: K, value: SettingValue<K>): Promise<void> {
    const entry = this.definitionOf(key)
    let checked: unknown
    try {
      checked = entry.schema(value)
    } catch (error) {
      throw new SettingsError('SETTINGS_INVALID', `${key}: ${messageOf(error)}`, key)
    }
    await this.persist(key, value)
    this.change(key, entry, checked, 'file')
  }

  async reset(key: string): Promise<void> {
    const entry = this.definitionOf(key)
    if (this.state.stored.has(key)) await this.persist(key, undefined)
    this.change(key, entry, entry.fallback, 'default')
  }

  list(): SettingEntry[] {
    return [...this.state.defined].map(([key, entry]) => {
      const line = this.state.stored.get(key)?.line
      const origin = entry.source === 'file' && line !== undefined ? { origin: `${this.file}:${line}` } : {}
      return {
        key,
        value: entry.value,
        default: entry.fallback,
        description: entry.description,
        source: entry.source,
        ...origin,
      }
    })
  }

  private definitionOf(key: string): Definition {
    const entry = this.state.defined.get(key)
    if (!entry)
      throw new SettingsError(
        'SETTINGS_UNDEFINED',
        `setting "${key}" is not defined: no mounted plugin declares it`,
        key,
      )
    return entry
  }

  private validateStored(key: string, schema: Schema, stored: StoredSetting): unknown {
    try {
      return schema(stored.value)
    } catch (error) {
      throw new SettingsError(
        'SETTINGS_INVALID',
        `${this.file}:${stored.line}: ${key}: ${messageOf(error)}`,
        key,
        this.file,
        stored.line,
      )
    }
  }

  /** A nested `model: { default: … }` would be silently ignored under flat keys: say how to write it. */
  private refuseNested(key: string): void {
    for (const [storedKey, stored] of this.state.stored) {
      if (!stored.nested || !key.startsWith(storedKey + '.') || this.state.defined.has(storedKey)) continue
      const problem = `"${storedKey}" is a nested mapping, but settings keys are flat: write \`${key}: …\` on one line`
      throw new SettingsError(
        'SETTINGS_FILE_INVALID',
        `${this.file}:${stored.line}: ${problem}`,
        key,
        this.file,
        stored.line,
      )
    }
  }

  private change(key: string, entry: Definition, value: unknown, source: SettingSource): void {
    const previous = entry.value
    entry.value = value
    entry.source = source
    if (!same(previous, value)) this.ctx.emit('settings/changed', key, value, previous)
  }

  /** Re-reads the file (keeping hand edits and comments), changes one key, and replaces it atomically. */
  private persist(key: string, value: unknown): Promise<void> {
    const task = this.state.writes.then(async () => {
      const { text } = readSettingsFile(this.file)
      const next = withSetting(text, this.file, key, value)
      await mkdir(dirname(this.file), { recursive: true })
      await writeFileAtomic(this.file, next)
      this.state.stored = parseSettings(next, this.file)
    })
    this.state.writes = task.catch(() => undefined)
    return task
  }

  unclaimed(): UnclaimedSetting[] {
    return [...this.state.stored]
      .filter(([key]) => !this.state.defined.has(key))
      .map(([key, stored]) => ({ key, file: this.file, line: stored.line }))
  }
}
