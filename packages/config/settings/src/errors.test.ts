import { expect, test } from 'vitest'
import { assertSettingKey, SettingsError } from './errors.ts'

test('a dotted key with an owner segment is accepted', () => {
  for (const key of ['model.default', 'permissions.preset', 'agent.maxSteps', 'llm-deepseek.baseUrl'])
    expect(() => assertSettingKey(key)).not.toThrow()
})

test('a key without a dot, with spaces or with an empty segment is refused with SETTINGS_KEY_INVALID', () => {
  for (const key of ['theme', 'model default', 'model..default', '.model', 'Model.default']) {
    const error = (() => {
      try {
        assertSettingKey(key)
      } catch (caught) {
        return caught
      }
    })()
    expect(error).toBeInstanceOf(SettingsError)
    expect((error as SettingsError).code).toBe('SETTINGS_KEY_INVALID')
    expect((error as SettingsError).message).toContain(`"${key}"`)
  }
})
