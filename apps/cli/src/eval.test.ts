import { spawnSync } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, test } from 'vitest'
import { loadTasks, type EvalReport } from './eval.ts'
import { run } from './launcher.ts'
import { useMockDeepSeek } from './test-support/mock-deepseek.ts'

const appDir = join(dirname(fileURLToPath(import.meta.url)), '..')
const shipped = join(appDir, '..', '..', 'evals')

// The eval's dsh processes inherit the environment: the mock provider stands in for DeepSeek.
const mock = useMockDeepSeek()

async function launch(argv: string[]) {
  let stdout = ''
  let stderr = ''
  const sink = (add: (text: string) => void) =>
    ({ write: (chunk: string) => (add(chunk), true) }) as unknown as NodeJS.WritableStream
  const code = await run(argv, {
    stdout: sink((text) => (stdout += text)),
    stderr: sink((text) => (stderr += text)),
    cwd: mock.home.dir,
    appDir,
  })
  return { code, stdout, stderr }
}

/** A model that solves fix-failing-test (read, edit, answer) and gives up on every other task. */
function scriptModel() {
  mock.llm.respondWith((request) => {
    const body = JSON.stringify(request.body)
    const toolResults = (request.body as { messages: { role: string }[] }).messages.filter(
      (message) => message.role === 'tool',
    ).length
    if (!body.includes('The test in test.js fails'))
      return { text: 'I will not do this one.', usage: { input: 100, output: 5 } }
    if (toolResults === 0)
      return { toolCalls: [{ name: 'read', arguments: { path: 'sum.js' } }], usage: { input: 200, output: 10 } }
    if (toolResults === 1)
      return {
        toolCalls: [{ name: 'edit', arguments: { path: 'sum.js', old_string: 'a - b', new_string: 'a + b' } }],
        usage: { input: 300, output: 20 },
      }
    return { text: 'Fixed: sum subtracted instead of adding.', usage: { input: 400, output: 8 } }
  })
}

/** Each eval task costs two `dsh` processes (the run and its `dsh usage`): the end-to-end run takes two tasks. */
const RUN_TASKS = ['fix-failing-test', 'fix-off-by-one']

test('dsh eval runs tasks in temporary copies, passes the one the model solves, and writes the report', async () => {
  scriptModel()
  // Two shipped tasks, copied as they are: the one the model solves and one it gives up on.
  for (const name of RUN_TASKS) cpSync(join(shipped, name), join(mock.home.dir, 'tasks', name), { recursive: true })
  const out = join(mock.home.dir, 'report.json')
  const { code, stdout, stderr } = await launch(['eval', join(mock.home.dir, 'tasks'), '--parallel', '2', '--out', out])
  expect(stderr).toBe('')
  expect(code).toBe(0)
  const report = JSON.parse(readFileSync(out, 'utf8')) as EvalReport
  expect(report.tasks).toBe(2)
  expect(report.passed).toBe(1)
  expect(report.passRate).toBe(0.5)
  const solved = report.results.find((result) => result.task === 'fix-failing-test')!
  expect(solved).toMatchObject({ passed: true, exitCode: 0, steps: 3, tokens: { input: 900, output: 38 } })
  expect(solved.seconds).toBeGreaterThan(0)
  const failed = report.results.find((result) => result.task === 'fix-off-by-one')!
  expect(failed).toMatchObject({
    passed: false,
    exitCode: 0,
    steps: 1,
    detail: expect.stringMatching(/^check failed \(1\)/),
  })
  expect(stdout).toMatch(/^task +result +steps +input +output +cost +seconds\n/)
  expect(stdout).toMatch(/\nfix-failing-test +pass +3 +900 +38 /)
  expect(stdout).toContain('\npassed 1 of 2 (50%)\n')
  // The task's own folder is untouched: the model edited a copy.
  expect(readFileSync(join(mock.home.dir, 'tasks', 'fix-failing-test', 'repo', 'sum.js'), 'utf8')).toContain('a - b')
}, 240_000)

test("every shipped task loads, and its check fails on the untouched repository (a pass is the model's work)", () => {
  const tasks = loadTasks(shipped)
  expect(tasks.map((task) => task.name)).toEqual([
    'add-cli-flag',
    'add-package-script',
    'config-default',
    'document-usage',
    'fix-failing-test',
    'fix-off-by-one',
    'implement-slugify',
    'python-fix-parser',
    'remove-dead-module',
    'rename-across-files',
  ])
  const work = mkdtempSync(join(tmpdir(), 'dsh-eval-checks-'))
  try {
    for (const task of tasks) {
      // As `dsh eval` runs a check: bash in a copy of the task's repo.
      const copy = join(work, task.name)
      cpSync(join(task.dir, 'repo'), copy, { recursive: true })
      const check = spawnSync('bash', ['-c', task.check], { cwd: copy, encoding: 'utf8', timeout: 60_000 })
      expect({ task: task.name, error: check.error, failed: check.status !== 0 }).toEqual({
        task: task.name,
        error: undefined,
        failed: true,
      })
    }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
})

test('a task folder without a check is a usage error naming the file', async () => {
  mock.home.write('tasks/broken/task.json', JSON.stringify({ instruction: 'do it' }))
  mock.home.write('tasks/broken/repo/a.txt', 'x')
  const { code, stderr } = await launch(['eval', join(mock.home.dir, 'tasks')])
  expect(code).toBe(2)
  expect(stderr).toBe(
    `dsh: dsh eval: ${join(mock.home.dir, 'tasks', 'broken', 'task.json')}: "check" must be a non-empty string (a bash command; exit 0 passes)\n`,
  )
})
