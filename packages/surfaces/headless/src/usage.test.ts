// End to end: `dsh usage` over sessions made by real runs of the launcher (in-process: test-support/dsh.ts) against the mock DeepSeek server.
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { dsh, dshOk, makeWorld, sessionFile, storedEvents, storedSessionIds, type World } from './test-support/dsh.ts'

let world: World
beforeEach(async () => {
  world = await makeWorld()
})
afterEach(async () => {
  await world.dispose()
})

/** The usage the stored logs hold: the truth `dsh usage` must add up to. */
function loggedUsage(ids: string[]) {
  const sum = { requests: 0, input: 0, cacheRead: 0, cacheWrite: 0, output: 0 }
  for (const id of ids)
    for (const event of storedEvents(world, id).filter((event) => event.type === 'assistant/message')) {
      sum.requests += 1
      for (const field of ['input', 'cacheRead', 'cacheWrite', 'output'] as const)
        sum[field] += event.data.usage?.[field] ?? 0
    }
  return sum
}

function modelOf(id: string): string {
  const context = storedEvents(world, id).find((event) => event.type === 'request/context')!
  return `${context.data.provider}/${context.data.model}`
}

async function usageJson(args: string[] = []) {
  const { code, stdout, stderr } = await dsh(world, ['usage', '--json', ...args])
  expect(code, stderr).toBe(0)
  return { report: JSON.parse(stdout), stderr }
}

describe('dsh usage', () => {
  test('the totals equal the sum of the logged usage of the sessions, and the cost is tokens × the configured prices', async () => {
    // DeepSeek reports the reasoning part of the output (`completion_tokens_details.reasoning_tokens`) when there is one.
    world.llm.enqueue(
      { text: 'one', usage: { input: 1000, output: 200, cacheRead: 300, reasoning: 120 } },
      { text: 'two', usage: { input: 4000, output: 50, cacheRead: 0 } },
    )
    await dshOk(world, ['the first session'])
    await dshOk(world, ['the second session'])
    const ids = storedSessionIds(world)
    expect(ids).toHaveLength(2)
    const model = modelOf(ids[0]!)
    writeFileSync(
      join(world.home, 'settings.yaml'),
      `usage.prices:\n  ${model}:\n    input: 2\n    cachedInput: 0.5\n    output: 10\n`,
    )
    const { report } = await usageJson()
    const logged = loggedUsage(ids)
    expect(logged.input + logged.cacheRead + logged.output).toBeGreaterThan(0)
    expect(report.total).toMatchObject(logged)
    expect(report.sessions).toBe(2)
    expect(report.groups).toHaveLength(1)
    expect(report.groups[0].key).toBe(model)
    const expected =
      (logged.input * 2 + logged.cacheRead * 0.5 + logged.cacheWrite * 2 + logged.output * 10) / 1_000_000
    expect(report.total.cost).toBeCloseTo(expected, 12)
    expect(report.damaged).toEqual([])
    // Logged with the message, summed, not priced on its own (it is part of the output).
    expect(
      ids.flatMap((id) =>
        storedEvents(world, id).flatMap((event) =>
          event.type === 'assistant/message' && event.data.usage.reasoning !== undefined
            ? [event.data.usage.reasoning]
            : [],
        ),
      ),
    ).toEqual([120])
    expect(report.total.reasoning).toBe(120)
    // The cache's share of the input and what it saved, in the JSON report and the text rows.
    expect(report.total.cacheHitShare).toBe(logged.cacheRead / (logged.input + logged.cacheRead + logged.cacheWrite))
    expect(report.total.cacheSaved).toBeCloseTo((logged.cacheRead * 1.5) / 1_000_000, 12)
    const share = Math.round((100 * logged.cacheRead) / (logged.input + logged.cacheRead + logged.cacheWrite))
    const text = (await dshOk(world, ['usage'])).stdout
    expect(text).toMatch(/^total  2 requests .* output 250 \(reasoning 120\)  \$/m)
    expect(text).toMatch(
      new RegExp(
        `^total  2 requests  input \\d+  cached ${logged.cacheRead} \\(${share}% cached\\) .* cache saved \\$${((logged.cacheRead * 1.5) / 1e6).toFixed(4).replace('.', '\\.')}$`,
        'm',
      ),
    )
  })

  test('a model without a price shows its tokens and "no price"', async () => {
    world.llm.enqueue({ text: 'one', usage: { input: 10, output: 5 } })
    // A model the shipped price table does not name.
    await dshOk(world, ['--model', 'unpriced-model', 'a task'])
    const [id] = storedSessionIds(world)
    expect(modelOf(id!)).toBe('deepseek/unpriced-model')
    const { report } = await usageJson()
    expect(report.total).toMatchObject({ ...loggedUsage([id!]), cost: null, unpriced: [modelOf(id!)] })
    expect(report.total.reasoning).toBeUndefined()
    const { stdout } = await dshOk(world, ['usage'])
    expect(stdout).toContain(`no price (${modelOf(id!)})`)
    expect(stdout).not.toContain('reasoning')
  })

  test('--by workspace and --by day group; the directory is the scope unless --all-workspaces', async () => {
    mkdirSync(join(world.repo, 'elsewhere'))
    world.llm.enqueue(
      { text: 'here', usage: { input: 7, output: 1 } },
      { text: 'there', usage: { input: 9, output: 2 } },
    )
    await dshOk(world, ['made here'])
    await dshOk(world, ['--cwd', 'elsewhere', 'made elsewhere'])
    const ids = storedSessionIds(world)
    const here = (await usageJson()).report
    expect(here.sessions).toBe(1)
    const all = (await usageJson(['--all-workspaces', '--by', 'workspace'])).report
    expect(all.groups.map((group: any) => group.key).sort()).toEqual([world.repo, join(world.repo, 'elsewhere')].sort())
    expect(all.total).toMatchObject(loggedUsage(ids))
    expect(here.total.input + all.groups.find((group: any) => group.key !== world.repo).input).toBe(all.total.input)
    const byDay = (await usageJson(['--all-workspaces', '--by', 'day'])).report
    expect(byDay.groups.map((group: any) => group.key)).toEqual([new Date().toISOString().slice(0, 10)])
  })

  test('--since leaves out requests logged before it', async () => {
    world.llm.enqueue({ text: 'one', usage: { input: 10, output: 5 } })
    await dshOk(world, ['a task'])
    expect((await usageJson(['--since', '24h'])).report.total.requests).toBe(1)
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)
    expect((await usageJson(['--since', tomorrow])).report.total).toMatchObject({ requests: 0, input: 0, output: 0 })
  })

  test('a damaged session is reported, not silently skipped', async () => {
    world.llm.enqueue({ text: 'one', usage: { input: 10, output: 5 } })
    await dshOk(world, ['a session that will be damaged'])
    const [id] = storedSessionIds(world)
    const seq = storedEvents(world, id!).length
    appendFileSync(
      sessionFile(world, id!)!,
      JSON.stringify({ type: 'tool/result', seq, time: 1, data: { callId: 'c', content: 'not blocks' } }) + '\n',
    )
    const { report, stderr } = await usageJson()
    expect(report.damaged).toEqual([{ id, reason: expect.stringContaining('data.content must be an array') }])
    expect(report.total.requests).toBe(0)
    expect(stderr).toContain(`dsh: session ${id} is damaged and its usage is not counted`)
  })

  test('bad usage exits 2 with one clear error', async () => {
    for (const [args, message] of [
      [['usage', '--by', 'tool'], '--by must be one of model, workspace, day, got "tool"'],
      [['usage', '--since', 'last week'], '--since must be a number of days or hours back'],
      [['usage', '--since', '2026-02-30'], '--since must be'],
      [['usage', 'extra'], 'dsh usage takes no arguments'],
      [['usage', '--all-workspaces', '--cwd', '.'], '--all-workspaces and --cwd cannot be combined'],
    ] as const) {
      const { code, stderr } = await dsh(world, [...args])
      expect(code, args.join(' ')).toBe(2)
      expect(stderr).toContain(message)
    }
  })

  test('a malformed price table in settings.yaml fails loudly, naming the file', async () => {
    writeFileSync(join(world.home, 'settings.yaml'), 'usage.prices:\n  deepseek/x:\n    input: cheap\n')
    const { code, stderr } = await dsh(world, ['usage'])
    expect(code).not.toBe(0)
    expect(stderr).toContain('settings.yaml')
  })
})
