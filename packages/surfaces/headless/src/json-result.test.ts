// End to end: the real launcher's `dsh --json` (in-process: test-support/dsh.ts) against the mock model; every stdout line of several real runs
// is validated against the published schema (docs/headless-lines.schema.json), and the result line's
// numbers are checked against the log and the configured prices.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { appDir } from '@dsh/test-harness'
import { dsh, makeWorld, storedEvents, storedSessionIds, type World } from './test-support/dsh.ts'

const schema = JSON.parse(readFileSync(join(appDir, '../../docs/headless-lines.schema.json'), 'utf8'))
const validLine = new Ajv2020({ strict: false }).compile(schema)

let world: World
beforeEach(async () => {
  world = await makeWorld()
})
afterEach(async () => {
  await world.dispose()
})

const call = (name: string, args: Record<string, unknown>, id: string) => ({ name, arguments: args, id })

/** Every line parsed and checked against the schema; the last one is returned as the result. */
function linesOf(stdout: string) {
  const lines = stdout
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line))
  for (const line of lines) expect(validLine(line), JSON.stringify(validLine.errors)).toBe(true)
  // Exactly one result line, and it is the last.
  expect(lines.filter((line) => line.type === 'result')).toHaveLength(1)
  return { events: lines.slice(0, -1), result: lines.at(-1) }
}

describe('the --json result line', () => {
  test('a completed run ends with its text, turns, steps, usage, cost from the price table and exit 0', async () => {
    // Prices are USD per million tokens: 1_000_000 input tokens at 2 USD would be 2 USD.
    writeFileSync(
      join(world.home, 'settings.yaml'),
      'usage.prices:\n  deepseek/deepseek-v4-flash:\n    input: 2\n    cachedInput: 0.5\n    output: 8\n',
    )
    world.write('a.txt', 'alpha\n')
    world.llm.enqueue(
      { toolCalls: [call('read', { path: 'a.txt' }, 'r1')], usage: { input: 100, output: 10 } },
      { text: 'It says alpha.', usage: { input: 300, cacheRead: 600, output: 20 } },
    )
    const { code, stdout } = await dsh(world, ['--json', '--model', 'deepseek-v4-flash', 'read a.txt'])
    expect(code).toBe(0)
    const { events, result } = linesOf(stdout)
    const id = storedSessionIds(world)[0]!
    expect(events.map((line) => line.seq)).toEqual(storedEvents(world, id).map((event) => event.seq))
    expect(result).toMatchObject({
      type: 'result',
      version: 1,
      sessionId: id,
      exitCode: 0,
      reason: 'completed',
      text: 'It says alpha.',
      turns: 1,
      steps: 2,
      refusals: [],
      unpriced: [],
    })
    expect(result.usage).toEqual({
      requests: 2,
      input: 400,
      cacheRead: 600,
      cacheWrite: 0,
      output: 30,
      cacheHitShare: 0.6,
    })
    expect(result.cost).toBeCloseTo((400 * 2 + 600 * 0.5 + 30 * 8) / 1_000_000, 12)
    expect(result.cacheSaved).toBeCloseTo((600 * (2 - 0.5)) / 1_000_000, 12)
    expect(result.durationMs).toBeGreaterThan(0)
  })

  test('a model error: exit 1, reason error, the error code, and no tokens', async () => {
    world.llm.enqueue({ error: { status: 400, message: 'the request was malformed' } })
    const { code, stdout } = await dsh(world, ['--json', 'anything'])
    expect(code).toBe(1)
    const { result } = linesOf(stdout)
    expect(result).toMatchObject({
      exitCode: 1,
      reason: 'error',
      error: { code: expect.any(String), message: expect.stringContaining('malformed') },
    })
    // The failed request was sent (and is counted), but it used no tokens.
    expect(result.usage).toEqual({ requests: 1, input: 0, cacheRead: 0, cacheWrite: 0, output: 0, cacheHitShare: null })
  })

  test('a refused approval is listed with who refused it', async () => {
    world.llm.enqueue(
      { toolCalls: [call('bash', { command: 'echo x > x.txt', sandbox: false, justification: 'marker' }, 'b1')] },
      { text: 'Could not.' },
    )
    // A model the shipped price table does not name.
    const { code, stdout } = await dsh(world, ['--json', '--model', 'unpriced-model', 'write x'])
    expect(code).toBe(1)
    const { result } = linesOf(stdout)
    expect(result).toMatchObject({
      exitCode: 1,
      reason: 'completed',
      text: 'Could not.',
      refusals: [{ tool: 'bash', by: 'no-answerer' }],
    })
    expect(result.cost).toBeNull()
    expect(result.unpriced).toEqual(['deepseek/unpriced-model'])
  })

  test('--max-turns (the same limit as --max-steps) ends the run with reason max-steps', async () => {
    world.write('loop.txt', 'again\n')
    world.llm.enqueue(
      ...Array.from({ length: 4 }, (_, i) => ({ toolCalls: [call('read', { path: 'loop.txt' }, `c${i}`)] })),
    )
    const { code, stdout } = await dsh(world, ['--json', '--max-turns', '2', 'loop'])
    expect(code).toBe(1)
    const { result } = linesOf(stdout)
    expect(world.llm.requests).toHaveLength(2)
    expect(result).toMatchObject({ exitCode: 1, steps: 2, reason: 'max-steps' })
  })

  test('a run that fails before a session exists still ends with a result line (sessionId null)', async () => {
    const { DEEPSEEK_API_KEY: _key, ...env } = world.env
    const { code, stdout } = await dsh(world, ['--json', 'say hello'], { env })
    expect(code).toBe(1)
    const { events, result } = linesOf(stdout)
    expect(events).toEqual([])
    expect(result).toMatchObject({
      sessionId: null,
      exitCode: 1,
      reason: 'not-started',
      error: { message: expect.stringContaining('DEEPSEEK_API_KEY') },
    })
  })
})

describe('--output-schema', () => {
  const schemaFile = () => {
    const file = join(world.repo, 'answer.schema.json')
    writeFileSync(
      file,
      JSON.stringify({
        type: 'object',
        required: ['files'],
        properties: { files: { type: 'array', items: { type: 'string' } } },
        additionalProperties: false,
      }),
    )
    return file
  }

  test('an answer valid against the schema is the structuredOutput; the model was told the schema', async () => {
    world.llm.enqueue({ text: '```json\n{"files": ["a.ts", "b.ts"]}\n```' })
    const { code, stdout } = await dsh(world, ['--json', '--output-schema', schemaFile(), 'list the files'])
    expect(code).toBe(0)
    const { result } = linesOf(stdout)
    expect(result.structuredOutput).toEqual({ files: ['a.ts', 'b.ts'] })
    expect(JSON.stringify(world.llm.requests[0]!.body.messages)).toContain('\\"required\\":[\\"files\\"]')
  })

  test('an invalid answer gets one retry naming the problem; a valid second answer passes', async () => {
    world.llm.enqueue({ text: 'Here are the files: a.ts' }, { text: '{"files": ["a.ts"]}' })
    const { code, stdout } = await dsh(world, ['--json', '--output-schema', schemaFile(), 'list the files'])
    expect(code).toBe(0)
    expect(world.llm.requests).toHaveLength(2)
    expect(JSON.stringify(world.llm.requests[1]!.body.messages.at(-1))).toContain('is not JSON')
    expect(linesOf(stdout).result).toMatchObject({ exitCode: 0, turns: 2, structuredOutput: { files: ['a.ts'] } })
  })

  test('an answer that never validates exits 1 with no structuredOutput, after exactly one retry', async () => {
    world.llm.enqueue({ text: '{"files": "a.ts"}' }, { text: '{"wrong": true}' })
    const { code, stdout, stderr } = await dsh(world, ['--json', '--output-schema', schemaFile(), 'list the files'])
    expect(code).toBe(1)
    expect(world.llm.requests).toHaveLength(2)
    expect(stderr).toMatch(/--output-schema: the answer does not satisfy the schema: .*after one retry/)
    const { result } = linesOf(stdout)
    expect(result).toMatchObject({ exitCode: 1, turns: 2 })
    expect(result).not.toHaveProperty('structuredOutput')
  })

  test('a schema file that is not JSON is bad usage (exit 2) naming the file, before any request', async () => {
    writeFileSync(join(world.repo, 'bad.json'), '{ nope')
    const { code, stderr } = await dsh(world, ['--output-schema', 'bad.json', 'list the files'])
    expect(code).toBe(2)
    expect(stderr).toMatch(/^dsh: --output-schema bad\.json: not JSON/)
    expect(world.llm.requests).toHaveLength(0)
  })
})
