// The git dsh runs itself, on a real repository whose config plants a program for each way git can run one.
import { execFileSync } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, expect, test } from 'vitest'
import { filterDrivers, gitEnvironment, runGit } from './index.ts'

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

function hostileRepository() {
  const repo = mkdtempSync(join(tmpdir(), 'dsh-git-kit-'))
  const marks = mkdtempSync(join(tmpdir(), 'dsh-git-kit-marks-'))
  dirs.push(repo, marks)
  const trap = join(marks, 'trap.sh')
  writeFileSync(trap, `#!/bin/sh\necho "$1" >> '${marks}/ran'\ncase "$1" in clean|smudge) tr a-z A-Z ;; esac\n`)
  chmodSync(trap, 0o755)
  execFileSync('git', ['init', '-q'], { cwd: repo })
  writeFileSync(join(repo, '.gitattributes'), '* filter=evil diff=evil\n')
  writeFileSync(join(repo, 'a.txt'), 'raw\n')
  writeFileSync(
    join(repo, '.git/config'),
    readFileSync(join(repo, '.git/config'), 'utf8') +
      `[filter "evil"]\n\tclean = '${trap}' clean\n\tprocess = '${trap}' process\n\trequired = true\n[filter "other.name"]\n\tsmudge = '${trap}' smudge\n` +
      `[core]\n\tpager = '${trap}' pager\n\tfsmonitor = '${trap}' fsmonitor\n[diff]\n\texternal = '${trap}' external\n[pager]\n\tstatus = '${trap}' pager-status\n`,
  )
  writeFileSync(join(repo, '.git/hooks/post-index-change'), `#!/bin/sh\n'${trap}' hook\n`)
  chmodSync(join(repo, '.git/hooks/post-index-change'), 0o755)
  return { repo, ran: join(marks, 'ran') }
}

test('filterDrivers names every filter a repository defines; with them off, status, add and diff run none of its programs', async () => {
  const { repo, ran } = hostileRepository()
  const drivers = await filterDrivers({ cwd: repo, timeoutMs: 10_000 })
  expect(drivers.sort()).toEqual(['evil', 'other.name'])
  await runGit(['status', '--porcelain'], { cwd: repo, timeoutMs: 10_000, filterDrivers: drivers })
  await runGit(['add', '-A'], { cwd: repo, timeoutMs: 10_000, filterDrivers: drivers })
  await runGit(['diff', '--cached', '--stat'], { cwd: repo, timeoutMs: 10_000, filterDrivers: drivers })
  expect(existsSync(ran)).toBe(false)
  // Added raw: the clean filter would have upper-cased it.
  expect((await runGit(['cat-file', 'blob', ':a.txt'], { cwd: repo, timeoutMs: 10_000 })).toString()).toBe('raw\n')
  // The traps are armed: plain git runs them.
  try {
    execFileSync('git', ['status'], { cwd: repo, stdio: 'ignore' })
  } catch {
    // the traps are no real fsmonitor or filter process, so git may fail: that they ran is what counts
  }
  expect(readFileSync(ran, 'utf8')).toMatch(/fsmonitor|hook|clean|pager/)
})

test('a repository without filters has none; git gets no system or global config and no secret of dsh', async () => {
  const repo = mkdtempSync(join(tmpdir(), 'dsh-git-kit-'))
  dirs.push(repo)
  execFileSync('git', ['init', '-q'], { cwd: repo })
  expect(await filterDrivers({ cwd: repo, timeoutMs: 10_000 })).toEqual([])
  process.env.DSH_GIT_KIT_TEST_TOKEN = 'secret-value'
  try {
    const env = gitEnvironment()
    expect(env).toMatchObject({
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_PAGER: 'cat',
      GIT_TERMINAL_PROMPT: '0',
    })
    expect(Object.values(env)).not.toContain('secret-value')
    const shown = (await runGit(['config', '--show-origin', '--list'], { cwd: repo, timeoutMs: 10_000 })).toString()
    expect(
      shown.split('\n').filter((line) => line.startsWith('file:') && !line.startsWith('file:.git/config')),
    ).toEqual([])
  } finally {
    delete process.env.DSH_GIT_KIT_TEST_TOKEN
  }
})
