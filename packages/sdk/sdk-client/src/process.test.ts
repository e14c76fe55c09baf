// close() escalation against real processes that ignore each step but the last.
import { expect, test } from 'vitest'
import { RuntimeProcess } from './process.ts'

const spawnNode = (script: string) =>
  RuntimeProcess.spawn({ file: process.execPath, args: ['-e', script] }, [], {
    env: process.env,
    stderr: 'pipe',
    stderrTailBytes: 1024,
  })

const TIMEOUTS = { shutdownMs: 150, eofMs: 150, termMs: 150 }

test('a process that ignores shutdown, EOF and SIGTERM is killed with SIGKILL', async () => {
  // Holds the loop, ignores stdin's end and SIGTERM: only SIGKILL ends it.
  const stubborn = await spawnNode(
    "process.on('SIGTERM', () => {}); process.stdin.on('end', () => {}); process.stdin.resume(); setInterval(() => {}, 1000); console.error('ready')",
  )
  await new Promise((resolve) => stubborn.child.stderr!.once('data', resolve))
  expect(await stubborn.close(() => stubborn.write('{"jsonrpc":"2.0","id":1,"method":"shutdown"}'), TIMEOUTS)).toEqual({
    stage: 'sigkill',
    code: null,
    signal: 'SIGKILL',
  })
})

test('a process that ends on EOF stops at the EOF step', async () => {
  const polite = await spawnNode(
    "process.stdin.resume(); process.stdin.on('end', () => process.exit(0)); console.error('ready')",
  )
  await new Promise((resolve) => polite.child.stderr!.once('data', resolve))
  expect(await polite.close(() => {}, TIMEOUTS)).toEqual({ stage: 'eof', code: 0, signal: null })
})

test('a process that ends on SIGTERM stops at the SIGTERM step', async () => {
  const plain = await spawnNode(
    "process.stdin.on('end', () => {}); process.stdin.resume(); setInterval(() => {}, 1000); console.error('ready')",
  )
  await new Promise((resolve) => plain.child.stderr!.once('data', resolve))
  expect(await plain.close(() => {}, TIMEOUTS)).toEqual({ stage: 'sigterm', code: null, signal: 'SIGTERM' })
})

test('a runtime that writes a line over maxLineBytes ends the connection with PROTOCOL_ERROR instead of growing the buffer', async () => {
  const { Harness } = await import('./harness.ts')
  // A fake runtime that answers nothing and floods stdout with one endless line.
  const flood = "process.stdout.write('x'.repeat(64 * 1024)); process.stdin.resume(); setInterval(() => {}, 1000)"
  const started = Harness.start({
    command: [process.execPath, '-e', flood, '--'],
    maxLineBytes: 4096,
    closeTimeouts: TIMEOUTS,
  })
  await expect(started).rejects.toMatchObject({
    code: 'PROTOCOL_ERROR',
    message: expect.stringContaining('longer than 4096 bytes'),
  })
})

test('warnings written after the runtime’s failure do not push it out of the stderr quoted in errors', async () => {
  // The failure first (as the launcher writes it: `dsh: …` and indented detail), then 4 KiB of warnings.
  const noisy = await spawnNode(
    [
      "console.error('dsh: the plugin tree did not boot:')",
      'console.error(\'  row "credentials": the credentials file must be a mapping\')',
      'for (let i = 0; i < 100; i++) console.error(`notification foo: Invalid params (warning ${i})`)',
      'process.exit(2)',
    ].join('; '),
  )
  await noisy.exited
  const message = noisy.describeExit()
  expect(message).toBe(
    'the dsh runtime exited with code 2; it reported on stderr:\ndsh: the plugin tree did not boot:\n  row "credentials": the credentials file must be a mapping',
  )
  // The tail itself is still the end of stderr, for a caller that wants it.
  expect(noisy.stderrTail()).toMatch(/warning 99\)$/)
  expect(noisy.stderrTail()).not.toContain('did not boot')
})

test('without a failure line the quote is the end of stderr', async () => {
  const crashed = await spawnNode("console.error('Error: something broke\\n    at somewhere'); process.exit(1)")
  await crashed.exited
  expect(crashed.describeExit()).toBe(
    'the dsh runtime exited with code 1; its stderr ends with:\nError: something broke\n    at somewhere',
  )
})
