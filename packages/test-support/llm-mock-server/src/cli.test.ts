// The `dsh-mock-llm` binary runs from dist (like `dsh`): `pnpm build` first.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, expect, test } from 'vitest'
import { json, post, readSse } from './test-support/sse.ts'

const bin = join(dirname(fileURLToPath(import.meta.url)), '../bin/dsh-mock-llm.js')
const children: ChildProcessWithoutNullStreams[] = []
const dirs: string[] = []

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL')
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

function run(args: string[]) {
  const child = spawn(process.execPath, [bin, ...args])
  children.push(child)
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (data) => (stdout += data))
  child.stderr.on('data', (data) => (stderr += data))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', () => {
      const match = /^listening on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(stdout)
      if (match) resolve(match[1])
    })
    void exited.then((code) => reject(new Error(`dsh-mock-llm exited ${code} before listening: ${stderr}`)))
  })
  // Tests that expect an early exit never await `listening`; its rejection is then expected, not unhandled.
  listening.catch(() => {})
  return { child, listening, exited, output: () => ({ stdout, stderr }) }
}

test('a spawned dsh-mock-llm is scripted, read and reset through its control API, and exits 0 on SIGTERM', async () => {
  const mock = run(['--port', '0'])
  const url = await mock.listening
  const enqueued = await post(`${url}/__mock/enqueue`, [
    { text: 'from afar' },
    { error: { status: 429, retryAfter: 2 } },
  ])
  expect(await json(enqueued)).toEqual({ pending: 2 })

  const { events } = await readSse(
    await post(`${url}/chat/completions`, { model: 'deepseek-v4-flash', messages: [], stream: true }),
  )
  expect(
    events
      .slice(1, -2)
      .map((event) => JSON.parse(event.data).choices[0].delta.content)
      .join(''),
  ).toBe('from afar')
  const limited = await post(
    `${url}/v1/messages`,
    { model: 'claude', messages: [], stream: true },
    { 'anthropic-version': '2023-06-01' },
  )
  expect(limited.status).toBe(429)
  expect(limited.headers.get('retry-after')).toBe('2')

  const recorded = await json(await fetch(`${url}/__mock/requests`))
  expect(recorded.map((request: any) => [request.protocol, request.path])).toEqual([
    ['openai', '/chat/completions'],
    ['anthropic', '/v1/messages'],
  ])
  expect(recorded[0].timing.endedAt).toBeGreaterThanOrEqual(recorded[0].timing.receivedAt)

  expect((await post(`${url}/__mock/reset`, {})).status).toBe(200)
  expect(await json(await fetch(`${url}/__mock/requests`))).toEqual([])
  mock.child.kill('SIGTERM')
  expect(await mock.exited).toBe(0)
})

test('a bad script sent to the control API is refused with 400 and MOCK_BAD_SCRIPT', async () => {
  const mock = run([])
  const url = await mock.listening
  const response = await post(`${url}/__mock/enqueue`, [{ text: 'ok' }, { stallAfterChunk: 1 }])
  expect(response.status).toBe(400)
  expect((await json(response)).error).toMatchObject({
    code: 'MOCK_BAD_SCRIPT',
    message: expect.stringContaining('[1]: unknown key "stallAfterChunk"'),
  })
})

test('--script enqueues its replies at start and --repeat keeps answering with the last one', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-mock-llm-'))
  dirs.push(dir)
  const script = join(dir, 'replies.json')
  writeFileSync(script, JSON.stringify([{ text: 'first' }, { text: 'bench' }]))
  const mock = run(['--script', script, '--repeat'])
  const url = await mock.listening
  const answers: string[] = []
  for (let i = 0; i < 4; i++)
    answers.push(
      (await json(await post(`${url}/chat/completions`, { model: 'm', messages: [] }))).choices[0].message.content,
    )
  expect(answers).toEqual(['first', 'bench', 'bench', 'bench'])
})

test('an unknown flag exits 2 with one line naming it and the usage, no stack', async () => {
  const mock = run(['--prot', '80'])
  expect(await mock.exited).toBe(2)
  const { stderr } = mock.output()
  expect(stderr).toMatch(/--prot/)
  expect(stderr).toMatch(/^usage: dsh-mock-llm/m)
  expect(stderr).not.toMatch(/\n\s+at /)
})

test('a --script file that is not JSON exits 2 naming the file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-mock-llm-'))
  dirs.push(dir)
  const script = join(dir, 'broken.json')
  writeFileSync(script, '[{"text": ')
  const mock = run(['--script', script])
  expect(await mock.exited).toBe(2)
  expect(mock.output().stderr).toContain(`--script ${script} is not JSON`)
})
