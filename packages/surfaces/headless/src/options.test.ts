// The tree's arguments → one invocation, through the real strict parser (`ctx.cmdlineArgs` of a booted tree).
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { bootComposition, type Harness } from '@dsh/test-harness'
import { readInvocation } from './options.ts'

let h: Harness
beforeAll(async () => {
  h = await bootComposition()
})
afterAll(async () => {
  await h.dispose()
})

const read = (...argv: string[]) => readInvocation(argv, (options, args) => h.root.cmdlineArgs.parse(options, args))

describe('a run', () => {
  test('the words of the task are joined and every option is read', () => {
    expect(
      read(
        '--json',
        '--approve',
        '-q',
        '--provider',
        'anthropic',
        '--model',
        'm',
        '--effort',
        'high',
        '--permission',
        'read-only',
        '--max-steps',
        '7',
        '--cwd',
        'sub',
        'fix',
        'the bug',
      ),
    ).toEqual({
      command: 'run',
      task: 'fix the bug',
      source: { kind: 'new', cwd: 'sub' },
      json: true,
      approve: true,
      quiet: true,
      route: { provider: 'anthropic', model: 'm', effort: 'high' },
      permission: 'read-only',
      maxSteps: 7,
    })
  })

  test('without words the task is left to stdin', () => {
    expect(read('--json')).not.toHaveProperty('task')
  })

  test('`resume <id>` and `--resume <id>` are the same run', () => {
    expect(read('resume', 'abc', 'more')).toEqual(read('--resume', 'abc', 'more'))
    expect(read('resume', 'abc', 'more')).toMatchObject({ source: { kind: 'resume', id: 'abc' }, task: 'more' })
  })

  test('`fork <id> --at <seq>` and `--fork <id> --at <seq>` are the same run', () => {
    expect(read('fork', 'abc', '--at', '12', 'other')).toEqual(read('--fork', 'abc', '--at', '12', 'other'))
    expect(read('fork', 'abc', '--at', '12', 'other')).toMatchObject({ source: { kind: 'fork', id: 'abc', atSeq: 12 } })
  })
})

describe('bad usage names what was wrong', () => {
  test.each([
    [['--fork', 'abc', 'x'], 'a fork needs --at <seq>: the last event it keeps (see dsh sessions show <id>)'],
    [['--at', '3', 'x'], '--at only goes with --fork <id> (or dsh fork <id> --at <seq>)'],
    [['--resume', 'a', '--fork', 'b', '--at', '1'], '--resume and --fork cannot be combined'],
    [
      ['--resume', 'a', '--cwd', 'x', 'go'],
      '--cwd cannot be combined with resume: a session keeps the directory it was created in',
    ],
    [['--max-steps', '0', 'x'], '--max-steps must be a whole number ≥ 1, got "0"'],
    [['--effort', 'extreme', 'x'], '--effort must be one of off, low, high, max, got "extreme"'],
    [['resume'], 'resume needs a session id (dsh resume <id> "more")'],
    [['sessions', 'show'], 'dsh sessions show needs a session id (see dsh sessions list)'],
    [
      ['sessions', 'remove', 'x'],
      'unknown sessions command "remove" (expected list, show, diff, search, reindex, rename, archive, unarchive, delete, export or import)',
    ],
    [['sessions', 'list', '--approve'], "Unknown option '--approve'"],
    [['--audit', 'x'], "Unknown option '--audit'"],
  ])('%j', (argv, message) => {
    expect(() => read(...argv)).toThrow(expect.objectContaining({ name: 'UsageError', message }))
  })
})

describe('sessions commands', () => {
  test('`sessions` alone lists; list and show take their own flags', () => {
    expect(read('sessions')).toEqual({ command: 'sessions-list', all: false, archived: false, json: false })
    expect(read('sessions', 'list', '--cwd', '/x', '--json')).toEqual({
      command: 'sessions-list',
      cwd: '/x',
      all: false,
      archived: false,
      json: true,
    })
    expect(read('sessions', 'show', 'abc', '--audit', '--json')).toEqual({
      command: 'sessions-show',
      id: 'abc',
      audit: true,
      json: true,
    })
  })
})
