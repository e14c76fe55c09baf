// /memory through the real launcher's headless surface (in this process), and the next run's request as the
// mock model server received it: what a person adds there is what the model reads, in the right workspace only.
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import { startMockServer } from '@dsh/llm-mock-server'
import { dshInProcess } from '@dsh/test-harness'
import { outsideDir } from '@dsh/test-harness/world'

test('a person adds and deletes entries with /memory in headless runs; the next run sends what is left', async () => {
  const llm = await startMockServer()
  onTestFinished(() => llm.close())
  const home = outsideDir('dsh-memory-home-')
  const repo = join(home, 'repo')
  const other = join(home, 'other')
  mkdirSync(repo)
  mkdirSync(other)
  // No title request after a turn: each run makes exactly its one request.
  mkdirSync(join(home, '.dsh'))
  writeFileSync(join(home, '.dsh', 'settings.yaml'), 'sessions.autoTitle: false\n')
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    DSH_HOME: join(home, '.dsh'),
    DEEPSEEK_BASE_URL: llm.url,
    DEEPSEEK_API_KEY: 'sk-memory-test-0123456789',
  }
  const dsh = (task: string, cwd = repo) => dshInProcess([task], { cwd, env })

  expect((await dsh('/memory add workspace Run tests with npm run check')).code).toBe(0)
  expect((await dsh('/memory add user Answer in French')).code).toBe(0)
  const shown = await dsh('/memory')
  expect(shown.stdout).toContain('  1. Run tests with npm run check')
  expect(shown.stdout).toContain('  1. Answer in French')
  const userFile = join(home, '.dsh', 'memory', 'user.md')
  expect(statSync(userFile).mode & 0o777).toBe(0o600)
  expect((await dsh('/memory delete user 1')).code).toBe(0)
  expect(readFileSync(userFile, 'utf8')).toBe('')
  const failed = await dsh('/memory delete user 1')
  expect(failed.code).not.toBe(0)
  expect(failed.stderr).toContain('the user memory has no entry 1')

  llm.enqueue({ text: 'ok' }, { text: 'ok' })
  expect((await dsh('hello')).code).toBe(0)
  expect((await dsh('hello', other)).code).toBe(0)
  expect(llm.requests).toHaveLength(2)
  const [inRepo, inOther] = llm.requests.map((request) => JSON.stringify(request.body.messages))
  expect(inRepo).toContain('1. Run tests with npm run check')
  expect(inRepo).not.toContain('French')
  expect(inOther).not.toContain('npm run check')
})
