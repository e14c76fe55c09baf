import { expect, test } from 'vitest'
import { parseSettings, withSetting } from './settings-yaml.ts'

const errorOf = (run: () => unknown) => {
  try {
    run()
  } catch (error) {
    return error as Error & { code?: string; line?: number }
  }
  throw new Error('expected an error')
}

test('a settings file that is a list, not a mapping, is refused naming the file and line', () => {
  const error = errorOf(() => parseSettings('# settings\n- model.default\n', '/h/settings.yaml'))
  expect(error).toMatchObject({ code: 'SETTINGS_FILE_INVALID', line: 2 })
  expect(error.message).toMatch(/^\/h\/settings\.yaml:2: the settings file must be a mapping of dotted keys/)
})

test('a key that is not a string is refused naming its line', () => {
  expect(errorOf(() => parseSettings('model.default: a\n[1, 2]: b\n', '/h/settings.yaml')).message).toBe(
    '/h/settings.yaml:2: a settings key must be a plain string such as `model.default`',
  )
})

test('each entry remembers the line of its key', () => {
  const entries = parseSettings('# one\n\nmodel.default: a\nagent.maxSteps: 5\n', '/h/settings.yaml')
  expect([...entries].map(([key, entry]) => [key, entry.value, entry.line])).toEqual([
    ['model.default', 'a', 3],
    ['agent.maxSteps', 5, 4],
  ])
})

test('writing into an empty file produces a flat mapping and a string that looks like a number stays a string', () => {
  const text = withSetting('', '/h/settings.yaml', 'model.default', '0123')
  expect(text).toBe('model.default: "0123"\n')
  expect(parseSettings(text, '/h/settings.yaml').get('model.default')?.value).toBe('0123')
})
