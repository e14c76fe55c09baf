// Progress lines are for a person at a terminal: the real binary under a real PTY shows them; piped, it does
// not (run.test.ts checks the piped stderr is empty).
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { spawn } from 'node-pty'
import { dshBin, makeWorld, type World } from './test-support/dsh.ts'
import { Progress } from './progress.ts'

let world: World
beforeEach(async () => {
  world = await makeWorld()
})
afterEach(async () => {
  await world.dispose()
})

/** `dsh <args>` on a real 200×40 PTY until it exits: its exit code, what the terminal received, and that as lines. */
async function onTerminal(args: string[]): Promise<{ code: number; screen: string; lines: string[] }> {
  const terminal = spawn(process.execPath, [dshBin, ...world.patchArgs, ...args], {
    cwd: world.repo,
    env: world.env,
    cols: 200,
    rows: 40,
  })
  let screen = ''
  terminal.onData((data) => (screen += data))
  const code = await new Promise<number>((resolve) => terminal.onExit(({ exitCode }) => resolve(exitCode)))
  return { code, screen, lines: screen.replace(/\r/g, '').split('\n') }
}

test('on a terminal, stderr shows thinking, each tool call with its summary, and the tokens used with the cache share and money', async () => {
  world.write('notes.txt', 'remember the milk\n')
  writeFileSync(
    join(world.home, 'settings.yaml'),
    'usage.prices:\n  deepseek/deepseek-v4-flash: { input: 2000, cachedInput: 500, output: 8000 }\n',
  )
  world.llm.enqueue(
    {
      reasoning: 'Read the notes first.',
      toolCalls: [{ id: 'r1', name: 'read', arguments: { path: 'notes.txt' } }],
      usage: { input: 100, output: 20, cacheRead: 50 },
    },
    { text: 'Remember the milk.', usage: { input: 10, output: 5, cacheRead: 150 } },
  )
  const { code, lines } = await onTerminal(['what do the notes say?'])
  expect(code).toBe(0)
  // Cost (100×2000 + 50×500 + 20×8000)/1e6 = 0.385 and saved 50×1500/1e6 = 0.075; then 0.52 and 0.3 over the run.
  expect(lines).toEqual([
    'thinking…',
    '  tokens: 150 in (50 cached, 33%), 20 out · $0.3850, cache saved $0.0750',
    '→ read notes.txt',
    '  tokens: 310 in (200 cached, 65%), 25 out · $0.5200, cache saved $0.3000',
    'Remember the milk.',
    '',
  ])
})

test('on a terminal, escape sequences in what the model wrote reach the screen as text only', async () => {
  // A prompt injection steers the model to write sequences that clear the screen, retitle the window,
  // write the clipboard (OSC 52) or overwrite a shown line with a carriage return.
  const hostile = 'Done.\x1b[2J\x1b]0;pwned\x07\x1b]52;c;ZXZpbA==\x07 all\rOK'
  world.llm.enqueue(
    { reasoning: 'x', toolCalls: [{ id: 'r1', name: 'read', arguments: { path: 'a\x1b[8mhidden.txt' } }] },
    { text: hostile },
  )
  const { code, screen } = await onTerminal(['go'])
  expect(code).toBe(0)
  expect(screen).not.toContain('\x1b')
  expect(screen).not.toContain('\x07')
  expect(screen).toContain('→ read ahidden.txt')
  expect(screen).toContain('Done. all\\x0dOK')
})

test('on a terminal, a model request that failed and will be retried says so instead of going silent', async () => {
  // Retries come quickly here; by default the first waits about a second and later ones longer.
  writeFileSync(join(world.home, 'cordis.patch.yml'), '- id: llm-retry\n  config: { baseDelayMs: 20, jitter: 0 }\n')
  world.llm.enqueue(
    { error: { status: 503, message: 'the service is overloaded' } },
    { text: 'Recovered.', usage: { input: 10, output: 2 } },
  )
  const { code, lines } = await onTerminal(['say something'])
  expect(code).toBe(0)
  expect(world.llm.requests).toHaveLength(2)
  expect(lines).toEqual([
    '  model request failed (SERVER); retrying in 20 ms (retry 1 of 4)',
    '  tokens: 10 in (0 cached, 0%), 2 out · $0.0000, cache saved $0.0000',
    'Recovered.',
    '',
  ])
})

test('a retry line counts from the event numbers, not from its reason text', () => {
  const lines: string[] = []
  const progress = new Progress(
    (line) => lines.push(line),
    (name) => name,
    80,
  )
  const retry = (data: Record<string, unknown>) => progress.event({ type: 'llm/retry', data } as never)
  retry({
    attempt: 2,
    maxRetries: 4,
    code: 'RATE_LIMIT',
    delayMs: 1500,
    reason: 'RATE_LIMIT: the provider asked to wait 1500 ms',
  })
  // A log written before llm-retry recorded maxRetries: its reason names a total, which is not shown.
  retry({ attempt: 1, code: 'SERVER', delayMs: 20, reason: 'SERVER: retry 1 of 9' })
  expect(lines).toEqual([
    '  model request failed (RATE_LIMIT); retrying in 1.5 s (retry 2 of 4)',
    '  model request failed (SERVER); retrying in 20 ms (retry 1)',
  ])
})

test('each todo_write shows the task list with its marks and how much is done', () => {
  const lines: string[] = []
  const progress = new Progress(
    (line) => lines.push(line),
    (name) => name,
    80,
  )
  const items = [
    { content: 'read the failing test', status: 'completed', priority: 'high' },
    { content: 'fix the parser', status: 'in_progress', priority: 'medium' },
    { content: 'run the suite', status: 'pending', priority: 'low' },
  ]
  progress.event({ type: 'todo/updated', seq: 0, time: 1, data: { callId: 't', items } } as never)
  expect(lines).toEqual([
    '  todo: 1 of 3 done',
    '    [x] read the failing test',
    '    [~] fix the parser',
    '    [ ] run the suite',
  ])
})

test('a command that exited 1 is a failure line, and a call its turn ended without is interrupted', () => {
  const lines: string[] = []
  const progress = new Progress(
    (line) => lines.push(line),
    (name, args) => `${name}: ${(args as { command: string }).command}`,
    80,
  )
  const events: [string, unknown][] = [
    ['turn/start', { turnId: 't' }],
    ['tool/call', { callId: 'f', name: 'bash', arguments: { command: 'false' } }],
    ['tool/result', { callId: 'f', content: [{ type: 'text', text: '(no output)\n[Exit code 1]' }] }],
    ['tool/call', { callId: 'cut', name: 'bash', arguments: { command: 'sleep 9' } }],
    ['turn/end', { turnId: 't', reason: 'aborted' }],
  ]
  events.forEach(([type, data], seq) => progress.event({ type, seq, time: seq, data } as never))
  expect(lines).toEqual(['→ bash: false', '  ✗ exit 1', '→ bash: sleep 9', '  ⊘ interrupted: bash: sleep 9'])
})

test("a running command's printed lines are shown as they arrive, up to the limit, then one note", () => {
  const lines: string[] = []
  const progress = new Progress(
    (line) => lines.push(line),
    (name, args) => `${name}: ${(args as { command: string }).command}`,
    80,
    2,
  )
  const events: [string, unknown][] = [
    ['tool/call', { callId: 'b', name: 'bash', arguments: { command: 'make' } }],
    ['tool/dispatched', { callId: 'b' }],
    ['tool/output', { callId: 'b', index: 0, text: 'compiling a\ncompil' }],
    ['tool/output', { callId: 'b', index: 1, text: 'ing b\nlinking\n', raw: 'ing b\n\x1b[1mlinking\x1b[0m\n' }],
    ['tool/output', { callId: 'b', index: 2, text: 'done\n' }],
  ]
  events.forEach(([type, data], seq) => progress.event({ type, seq, time: seq, data } as never))
  expect(lines).toEqual([
    '→ bash: make',
    '  │ compiling a',
    '  │ compiling b',
    '  │ … (the rest is in the session log)',
  ])
})

test("a program's calls (code mode) are indented under their run_code call, failures too", () => {
  const lines: string[] = []
  const progress = new Progress(
    (line) => lines.push(line),
    (name, args) => `${name} ${JSON.stringify(args)}`,
    80,
  )
  const events: [string, unknown][] = [
    ['tool/call', { callId: 'p', name: 'run_code', arguments: { code: 'x' } }],
    ['tool/call', { callId: 'p.1', name: 'read', arguments: { path: 'a' }, parentCallId: 'p' }],
    ['tool/result', { callId: 'p.1', content: [{ type: 'text', text: 'a' }] }],
    ['tool/call', { callId: 'p.2', name: 'write', arguments: { path: '/x' }, parentCallId: 'p' }],
    [
      'tool/result',
      { callId: 'p.2', content: [{ type: 'text', text: 'no' }], error: { code: 'DENIED', message: 'no' } },
    ],
    ['tool/result', { callId: 'p', content: [{ type: 'text', text: 'Returned: 1' }] }],
  ]
  events.forEach(([type, data], seq) => progress.event({ type, seq, time: seq, data } as never))
  expect(lines).toEqual([
    '→ run_code {"code":"x"}',
    '    → read {"path":"a"}',
    '    → write {"path":"/x"}',
    '      ✗ DENIED: no',
  ])
})

test('on a terminal, dsh --preset code shows run_code and, indented under it, the calls its program made', async () => {
  world.write('notes.txt', 'remember the milk\n')
  const code = "const text = await read({ path: 'notes.txt' })\nreturn text.includes('milk')"
  world.llm.enqueue({ toolCalls: [{ id: 'p1', name: 'run_code', arguments: { code } }] }, { text: 'It says milk.' })
  const { code: exit, screen, lines: all } = await onTerminal(['--preset', 'code', 'what do the notes say?'])
  const lines = all.filter((line) => line.includes('→'))
  expect(exit).toBe(0)
  expect(lines).toEqual(['→ run_code (2 lines)', '    → read notes.txt'])
  expect(screen).toContain('It says milk.')
})
