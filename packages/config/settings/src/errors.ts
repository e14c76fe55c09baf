/** What went wrong with a setting; surfaces and boot print `message`, code lets callers branch. */
export type SettingsErrorCode =
  | 'SETTINGS_KEY_INVALID' // a key that is not a dotted name (`model.default`)
  | 'SETTINGS_DUPLICATE' // a second plugin defines a key that is already defined
  | 'SETTINGS_NO_DEFAULT' // a schema that yields nothing for a missing value
  | 'SETTINGS_UNDEFINED' // a read or write of a key no mounted plugin defines
  | 'SETTINGS_INVALID' // a value (from the file or from a surface) its schema rejects
  | 'SETTINGS_FILE_INVALID' // the settings file itself is malformed

/** A typed settings failure. When the value came from a file, `file` and `line` say where. */
export class SettingsError extends Error {
  override name = 'SettingsError'
  constructor(
    readonly code: SettingsErrorCode,
    message: string,
    readonly key?: string,
    readonly file?: string,
    readonly line?: number,
    options?: ErrorOptions,
  ) {
    super(message, options)
  }
}

/**
 * Keys are dotted names with at least two segments, the first naming the owner (`agent.maxSteps`,
 * `permissions.preset`, `llm-deepseek.baseUrl`), so that settings of different plugins cannot collide.
 */
export const SETTING_KEY_PATTERN = /^[a-z][a-zA-Z0-9-]*(?:\.[a-zA-Z][a-zA-Z0-9-]*)+$/

/** Throws SETTINGS_KEY_INVALID unless `key` is a dotted setting name. */
export function assertSettingKey(key: string): void {
  if (typeof key !== 'string' || !SETTING_KEY_PATTERN.test(key)) {
    throw new SettingsError(
      'SETTINGS_KEY_INVALID',
      `"${String(key)}" is not a setting key: use a dotted name such as "agent.maxSteps"`,
      String(key),
    )
  }
}
