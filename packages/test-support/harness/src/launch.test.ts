import { afterEach, expect, test } from 'vitest'
import { tempDir } from './world.ts'
import { dshInProcess, launchInProcess } from './launch.ts'

const baseEnv = (home: string) => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, DSH_HOME: home })

afterEach(() => {
  expect(process.env.DSH_IN_PROCESS_PROBE).toBeUndefined()
})

test('the launcher runs in this process: its exit code returned, its output in the pipes, the process left running', async () => {
  const home = tempDir('dsh-in-process-')
  expect(await dshInProcess(['--version'], { env: baseEnv(home), cwd: home })).toEqual({
    code: 0,
    stdout: expect.stringMatching(/^dsh \d+\.\d+\.\d+\n$/),
    stderr: '',
  })
  // A user mistake is exit 2 with one line, as from the binary; no process.exit ended this test.
  const bad = await dshInProcess(['--max-steps', 'many', 'a task'], {
    env: { ...baseEnv(home), DEEPSEEK_API_KEY: 'test-key-for-the-mock-server' },
    cwd: home,
  })
  expect(bad.code).toBe(2)
  expect(bad.stderr).toMatch(/^dsh: .*max-steps/)
  expect(bad.stdout).toBe('')
})

test('the environment of a launch is the process environment while it runs, and the old one afterwards', async () => {
  const home = tempDir('dsh-in-process-')
  const before = { ...process.env }
  // `--dump-config` names the home the launch resolved from its DSH_HOME.
  const { code, stdout } = await dshInProcess(['--dump-config'], {
    env: { ...baseEnv(home), DSH_IN_PROCESS_PROBE: '1' },
    cwd: home,
  })
  expect(code).toBe(0)
  expect(stdout).toContain(`home ${home}`)
  expect(process.env).toEqual(before)
})

test('two launches side by side with different environments are refused, loudly; a home of its own each is not a difference', async () => {
  const home = tempDir('dsh-in-process-')
  const other = tempDir('dsh-in-process-')
  const first = launchInProcess(['--check'], { env: baseEnv(home), cwd: home })
  expect(() =>
    launchInProcess(['--check'], { env: { ...baseEnv(home), DSH_IN_PROCESS_PROBE: '1' }, cwd: home }),
  ).toThrow(/different environments/)
  // DSH_HOME is read by the launcher from its own env, never by a plugin from process.env (two SDK runtimes).
  const second = launchInProcess(['--dump-config'], { env: { ...baseEnv(home), DSH_HOME: other }, cwd: other })
  expect(await first.exited).toBe(0)
  expect(await second.exited).toBe(0)
  expect(second.stdout()).toContain(`home ${other}`)
})
