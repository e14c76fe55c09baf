// Plain mode, in-process (the launcher's run() with piped streams): lines in, lines out, nothing redrawn.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { dshInProcess } from '@dsh/test-harness'
import { makeWorld, storedSessions, type World } from './test-support/world.ts'

let world: World
beforeAll(async () => {
  world = await makeWorld()
})
afterAll(async () => {
  await world?.dispose()
})

test('plain mode prints finished items as lines, takes typed-ahead lines as the answer to an approval, and exits 0 at the end of input', async () => {
  world.llm.enqueue(
    {
      toolCalls: [
        { id: 'b1', name: 'bash', arguments: { command: 'touch plain.txt', sandbox: false, justification: 'asked' } },
      ],
    },
    { text: 'Plain answer.' },
  )
  const run = await dshInProcess(['tui', '--plain', ...world.patchArgs], {
    env: world.env,
    cwd: world.repo,
    stdin: 'make it\ny\n/usage\n',
  })
  expect(run.code).toBe(0)
  expect(existsSync(join(world.repo, 'plain.txt'))).toBe(true)
  const lines = run.stdout.split('\n')
  expect(lines).toContain('› make it')
  expect(
    lines.some((line) => /^Allow .*touch plain\.txt.*\? y once, s this session, a always \(.+\), n reject$/.test(line)),
  ).toBe(true)
  expect(lines.some((line) => /^✓ bash.*touch plain\.txt.*exit 0/.test(line))).toBe(true)
  expect(lines).toContain('Plain answer.')
  expect(lines.some((line) => /^context .* · 2 requests · /.test(line))).toBe(true)
  // Lines only: no cursor movement, no colour.
  expect(run.stdout).not.toContain('\x1b')
  const [events] = [...storedSessions(world).values()]
  expect(events!.find((event) => event.type === 'approval/decided')?.data).toMatchObject({
    answer: 'allow_once',
    by: 'user',
  })
})
