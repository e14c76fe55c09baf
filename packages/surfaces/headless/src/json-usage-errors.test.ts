// Every way a `--json` run can fail before it starts, found by the launcher (its own flags, the profile, a
// patch, the settings file) or by headless (a flag, no task, an unknown session, preset or provider): stdout
// is exactly one result line, valid against docs/headless-lines.schema.json, and the exit code is 2. The real
// launcher in-process (test-support/dsh.ts); no case reaches the model.
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import { appDir } from '@dsh/test-harness'
import { dsh, makeWorld, type World } from './test-support/dsh.ts'

const schema = JSON.parse(readFileSync(join(appDir, '../../docs/headless-lines.schema.json'), 'utf8'))
const validLine = new Ajv2020({ strict: false }).compile(schema)

let world: World
beforeAll(async () => {
  world = await makeWorld()
})
afterAll(async () => {
  await world.dispose()
})
afterEach(() => rmSync(join(world.home, 'settings.yaml'), { force: true }))

interface Case {
  args: string[]
  /** A part of the message, on stderr (after `dsh: `) and in the result line's `error.message`. */
  message: string
  settings?: string
  code?: string
}

async function expectOneResultLine({ args, message, settings, code }: Case) {
  if (settings !== undefined) writeFileSync(join(world.home, 'settings.yaml'), settings)
  const { code: exitCode, stdout, stderr } = await dsh(world, args, { stdin: '' })
  expect(stderr).toMatch(/^dsh: /)
  expect(stderr).toContain(message)
  const lines = stdout.trimEnd().split('\n')
  expect(lines).toHaveLength(1)
  const line = JSON.parse(lines[0]!)
  expect(validLine(line), JSON.stringify(validLine.errors)).toBe(true)
  expect(line).toMatchObject({
    type: 'result',
    sessionId: null,
    exitCode: 2,
    reason: 'not-started',
    error: { message: expect.stringContaining(message), ...(code ? { code } : {}) },
    steps: 0,
  })
  expect(exitCode).toBe(2)
  expect(world.llm.requests).toHaveLength(0)
}

describe('found by the launcher, before the tree runs', () => {
  const cases: [string, Case][] = [
    ['a launcher flag without its value', { args: ['--json', 'task', '--patch'], message: '--patch needs a value' }],
    [
      'the profile given twice',
      { args: ['--json', '--profile', 'headless', '--profile', 'headless', 'task'], message: '--profile given twice' },
    ],
    ['an unknown profile', { args: ['--json', '--profile', 'nope', 'task'], message: 'unknown profile "nope"' }],
    [
      'a patch file that is not there',
      { args: ['--json', '--patch', '/nonexistent.yml', 'task'], message: 'patch file not found' },
    ],
    [
      'a setting nobody defines',
      { args: ['--json', 'task'], settings: 'agent.maxStep: 3\n', message: 'unknown setting "agent.maxStep"' },
    ],
    [
      'a setting with a bad value',
      { args: ['--json', 'task'], settings: 'agent.maxSteps: 0\n', message: 'agent.maxSteps: expected number >= 1' },
    ],
  ]
  test.each(cases)('%s', async (_name, item) => expectOneResultLine(item))
})

describe('found by headless', () => {
  const cases: [string, Case][] = [
    ['an unknown flag', { args: ['--json', '--bogus', 'task'], message: "Unknown option '--bogus'" }],
    ['a flag without its value', { args: ['task', '--json', '--model'], message: '--model' }],
    [
      'a bad step limit',
      { args: ['--json', '--max-steps', '0', 'task'], message: '--max-steps must be a whole number' },
    ],
    [
      'both names of the step limit',
      { args: ['--json', '--max-steps', '3', '--max-turns', '3', 'task'], message: '--max-steps and --max-turns' },
    ],
    ['a bad effort', { args: ['--json', '--effort', 'huge', 'task'], message: '--effort must be one of' }],
    ['resume without an id', { args: ['resume', '--json'], message: 'resume needs a session id' }],
    ['--resume with --fork', { args: ['--json', '--resume', 'a', '--fork', 'b', 'x'], message: '--resume and --fork' }],
    ['--at without --fork', { args: ['--json', '--at', '3', 'task'], message: '--at only goes with --fork' }],
    [
      '--preset with a resume',
      { args: ['--json', '--resume', 'a', '--preset', 'explore', 'x'], message: '--preset cannot' },
    ],
    ['no task (empty stdin)', { args: ['--json'], message: 'no task' }],
    [
      'an unknown session',
      {
        args: ['--json', '--resume', 'nosuch', 'more'],
        message: 'session nosuch not found',
        code: 'SESSION_NOT_FOUND',
      },
    ],
    ['an unknown preset', { args: ['--json', '--preset', 'nope', 'task'], message: 'there is no agent preset "nope"' }],
    ['an unknown provider', { args: ['--json', '--provider', 'nope', 'task'], message: 'no model provider "nope"' }],
    [
      'a missing output schema',
      { args: ['--json', '--output-schema', '/nonexistent.json', 'x'], message: '--output-schema' },
    ],
  ]
  test.each(cases)('%s', async (_name, item) => expectOneResultLine(item))
})

describe('no result line where --json is not a run', () => {
  test('a listing command keeps its own output: its usage error prints nothing on stdout', async () => {
    const { code, stdout, stderr } = await dsh(world, ['sessions', 'list', '--json', '--bogus'])
    expect({ code, stdout }).toEqual({ code: 2, stdout: '' })
    expect(stderr).toContain("Unknown option '--bogus'")
  })

  test('another profile’s usage error prints nothing on stdout', async () => {
    const { code, stdout } = await dsh(world, ['--profile', 'sdk', '--json'])
    expect({ code, stdout }).toEqual({ code: 2, stdout: '' })
  })
})
