import { type Context, Service } from '@dsh/cordis'
import type Schema from '@dsh/schemastery'

export { assertSettingKey, SETTING_KEY_PATTERN, SettingsError, type SettingsErrorCode } from './errors.ts'

/**
 * The typed map of every setting, grown by the plugins that define them:
 * `declare module '@dsh/settings' { interface Settings { 'agent.maxSteps': number } }`.
 */
export interface Settings {}

/** The type of a setting: declared in `Settings`, else unknown. */
export type SettingValue<K extends string> = K extends keyof Settings ? Settings[K] : unknown

/** Where a setting's current value comes from: the schema's default, or the provider's store. */
export type SettingSource = 'default' | 'file'

/** One defined setting as surfaces show it (`list()`). Settings never hold secrets, so values are shown. */
export interface SettingEntry {
  key: string
  value: unknown
  default: unknown
  description: string
  source: SettingSource
  /** Where the stored value lives (`/home/u/.dsh/settings.yaml:4`); absent when `source` is `default`. */
  origin?: string
}

/** A key stored in the settings file that no mounted plugin defines (a typo, or another profile's setting). */
export interface UnclaimedSetting {
  key: string
  file: string
  line: number
}

export interface DefineOptions {
  /** What the setting changes, for surfaces. Defaults to the schema's own description. */
  description?: string
}

declare module '@dsh/cordis' {
  interface Context {
    settings: SettingsService
  }
  interface Events {
    /** A defined setting's effective value changed (a surface set or reset it). */
    'settings/changed'(key: string, value: unknown, previous: unknown): void
  }
}

/**
 * User settings: plugins declare what they read, surfaces write. Owns: the defined keys, their schemas and
 * current values, and change notification. Must not own: secrets (that is `ctx.credentials`), what a
 * setting means (its defining plugin), or per-session state (the session log).
 */
export abstract class SettingsService extends Service {
  constructor(ctx: Context) {
    super(ctx, 'settings')
  }

  /**
   * Declares a setting the calling plugin reads. `schema` must yield a default for a missing value. An
   * effect: disposing the caller removes the definition. Throws SettingsError when the key is malformed or
   * already defined, or when the stored value does not satisfy `schema` (naming where it is stored).
   */
  abstract define<K extends string>(key: K, schema: Schema<any, SettingValue<K>>, options?: DefineOptions): () => void

  /** The current value of a defined setting; SETTINGS_UNDEFINED for a key no mounted plugin defines. */
  abstract get<K extends string>(key: K): SettingValue<K>

  /** Validates `value` against the setting's schema, persists it, then emits `settings/changed`. */
  abstract set<K extends string>(key: K, value: SettingValue<K>): Promise<void>

  /** Removes the stored value so the default applies again, then emits `settings/changed`. */
  abstract reset(key: string): Promise<void>

  /** Every defined setting with its value, default, description and where the value comes from. */
  abstract list(): SettingEntry[]

  /**
   * Stored keys no mounted plugin defines, with where they are written. Meaningful once the tree has
   * settled (plugins define their settings as they mount): the launcher checks them then (a typo is exit 2).
   */
  abstract unclaimed(): UnclaimedSetting[]

  /** Calls `listener` when `key` changes. An effect of the caller: undone when the caller is disposed. */
  onChange<K extends string>(
    key: K,
    listener: (value: SettingValue<K>, previous: SettingValue<K>) => void,
  ): () => boolean {
    return this.ctx.on('settings/changed', (changed, value, previous) => {
      if (changed === key) listener(value as SettingValue<K>, previous as SettingValue<K>)
    })
  }
}
