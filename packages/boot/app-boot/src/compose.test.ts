import { describe, expect, test } from 'vitest'
import { compose, walkRows, type Layer } from './compose.ts'
import { requestCheckMarks } from './dump.ts'
import { CompositionError } from './errors.ts'
import { JsExpr } from './js-expr.ts'
import { parsePatch } from './patch-file.ts'

const layer = (label: string, text: string): Layer => ({
  label,
  file: `/layers/${label}.yml`,
  items: parsePatch(text, `/layers/${label}.yml`),
})

const base = layer(
  'base',
  `
- insert:
    - id: logger
      name: '@dsh/logger'
      config: { level: warn, colors: true }
    - id: tools
      children:
        - id: bash
          name: '@dsh/tool-bash'
`,
)

function failure(fn: () => unknown): CompositionError {
  try {
    fn()
  } catch (error) {
    if (error instanceof CompositionError) return error
    throw error
  }
  throw new Error('expected a CompositionError')
}

describe('compose', () => {
  test('later layers replace keys of earlier rows; config is replaced whole', () => {
    const { rows } = compose([base, layer('user', `\n- id: logger\n  config: { level: debug }\n`)])
    expect(rows[0]!.config).toEqual({ level: 'debug' })
  })

  test('a row inserted into a group by an earlier layer is targetable by a later one', () => {
    const { rows } = compose([
      base,
      layer('home', `- insert: [{ id: grep, name: '@dsh/tool-grep' }]\n  into: tools\n`),
      layer('cli', `- id: grep\n  disabled: true\n`),
    ])
    const tools = rows.find((row) => row.id === 'tools')!
    expect(tools.children!.map((row) => row.id)).toEqual(['bash', 'grep'])
    expect(tools.children![1]).toMatchObject({ disabled: true })
    expect(tools.children![1]!.touches.map((touch) => touch.layer)).toEqual([1, 2])
  })

  test('null removes a key, so a later layer can re-enable a row', () => {
    const { rows } = compose([
      base,
      layer('a', '- id: bash\n  disabled: true\n'),
      layer('b', '- id: bash\n  disabled: null\n'),
    ])
    const bash = [...walkRows(rows)].find(([row]) => row.id === 'bash')![0]
    expect('disabled' in bash).toBe(false)
  })

  test('!!js values stay expressions until the row is mounted', () => {
    const { rows } = compose([
      layer(
        'a',
        "- insert: [{ id: x, name: x, disabled: !!js 'cmdlineArgs.argv.length > 0', config: { n: !!js '1 + 1' } }]\n",
      ),
    ])
    expect(rows[0]!.disabled).toBeInstanceOf(JsExpr)
    expect((rows[0]!.config as any).n).toEqual(new JsExpr('1 + 1'))
  })

  test('composition does not mutate its input layers', () => {
    const layers = [base, layer('user', '- id: logger\n  config: { level: debug }\n')]
    const before = JSON.stringify(layers)
    compose(layers)
    compose(layers)
    expect(JSON.stringify(layers)).toBe(before)
  })
})

describe('composition errors name the file and the line', () => {
  test('an id that matches no row', () => {
    const error = failure(() => compose([base, layer('user', '\n\n- id: nothing\n  disabled: true\n')]))
    expect(error.message).toBe('/layers/user.yml:3: no row has id "nothing" (known ids: logger, tools, bash)')
  })

  test('inserting into a row that is not a group', () => {
    const error = failure(() => compose([base, layer('user', '- insert: [{ id: y, name: y }]\n  into: logger\n')]))
    expect(error.message).toMatch(/user\.yml:1: `into: logger` is not a group/)
  })

  test('a duplicate id says where the first one was inserted', () => {
    const error = failure(() => compose([base, layer('user', '- insert:\n    - id: logger\n      name: other\n')]))
    expect(error.message).toBe('/layers/user.yml:2: row id "logger" is already used (inserted at /layers/base.yml:3)')
  })

  test('malformed YAML', () => {
    const error = failure(() => parsePatch('- insert:\n    - id: a\n   name: [oops\n', '/p.yml'))
    expect(error.file).toBe('/p.yml')
    expect(error.line).toBeGreaterThan(0)
    expect(error.message).toMatch(/^\/p\.yml:\d+: malformed YAML/)
  })

  test('a patch that is not a list', () => {
    expect(failure(() => parsePatch('id: logger\n', '/p.yml')).message).toBe(
      '/p.yml:1: a patch file must be a YAML list of items (`- insert: [...]` or `- id: <row>`)',
    )
  })

  test('an item of the wrong shape', () => {
    expect(failure(() => parsePatch('- insert: [{ id: a, name: b }]\n  where: top\n', '/p.yml')).message).toBe(
      '/p.yml:2: unexpected key "where" in an insert item (expected insert, into)',
    )
    expect(failure(() => parsePatch('- name: x\n', '/p.yml')).message).toBe(
      '/p.yml:1: a patch item needs `insert` (to add rows) or `id` (to change a row)',
    )
    expect(failure(() => parsePatch('- insert: [{ id: a }]\n', '/p.yml')).message).toMatch(/row "a" needs a `name`/)
    expect(failure(() => parsePatch('- id: a\n  disabled: sometimes\n', '/p.yml')).message).toBe(
      '/p.yml:2: `disabled` must be true, false or a `!!js` expression',
    )
  })

  test('!!js outside config and disabled is refused', () => {
    expect(failure(() => parsePatch('- id: a\n  name: !!js \'"x"\'\n', '/p.yml')).message).toBe(
      '/p.yml:2: `!!js` is only allowed in `config` and `disabled`, not in `name`',
    )
  })
})

describe('the request check in the dump', () => {
  const spine = layer(
    'bundle',
    `- insert:\n    - id: llm\n      name: '@dsh/llm'\n    - id: invariants\n      name: '@dsh/invariants'\n`,
  )

  test('a composition with the check mounted is not marked', () => {
    expect(requestCheckMarks(compose([spine]))).toEqual([])
  })

  test('a disabled check is marked as one boot refuses', () => {
    expect(requestCheckMarks(compose([spine, layer('cli', '- id: invariants\n  disabled: true\n')]))).toEqual([
      'NO REQUEST CHECK: no enabled @dsh/invariants row; boot refuses this tree unless the llm row says unchecked: true',
    ])
  })

  test('an llm row that sends unchecked is marked UNCHECKED', () => {
    const marks = requestCheckMarks(
      compose([spine, layer('cli', '- id: invariants\n  disabled: true\n- id: llm\n  config: { unchecked: true }\n')]),
    )
    expect(marks).toEqual([
      'UNCHECKED: row "llm" sends model requests with no check against the session log (unchecked: true)',
    ])
  })
})
