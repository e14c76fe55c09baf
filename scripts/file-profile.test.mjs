import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { isDshLaunch, readProfiles, renderProfiles } from './file-profile.mjs'
import { repo } from './lib.mjs'

test('a dsh launch is node with a launcher script, the launcher itself, `dsh` on PATH or a shell line running one; other processes are not', () => {
  expect(isDshLaunch(process.execPath, ['/r/apps/cli/bin/dsh.js', '--json', 'task'])).toBe(true)
  expect(isDshLaunch(process.execPath, ['/r/apps/cli/dist/bin.js'])).toBe(true)
  expect(isDshLaunch(process.execPath, ['/tmp/pkg/dist/dsh.mjs'])).toBe(true)
  expect(isDshLaunch('/prefix/bin/dsh', ['--version'])).toBe(true)
  expect(isDshLaunch('dsh', [])).toBe(true)
  expect(isDshLaunch('bash', ['-c', `node '/r/apps/cli/bin/dsh.js' --profile sdk`])).toBe(true)
  expect(isDshLaunch('bash', ['-c', 'echo hi'])).toBe(false)
  expect(isDshLaunch(process.execPath, ['/r/packages/x/bin/mock.js'])).toBe(false)
  expect(isDshLaunch('git', ['commit', '-m', 'dsh.js'])).toBe(false)
})

test('the table lists the files with the most CPU first, at most the limit, and totals every file', () => {
  const records = [
    { file: '/r/a.test.ts', workerCpuMs: 1000, childCpuMs: 500, wallMs: 3000, dshLaunches: 0 },
    { file: '/r/b.test.ts', workerCpuMs: 200, childCpuMs: 9000, wallMs: 12000, dshLaunches: 4 },
    { file: '/r/c.test.ts', workerCpuMs: 100, childCpuMs: null, wallMs: 100, dshLaunches: 0 },
  ]
  const lines = renderProfiles(records, '/r', 2).split('\n')
  expect(lines[1]).toMatch(/^\s*9\.2\s+0\.2\s+9\.0\s+12\.0\s+4\s+b\.test\.ts$/)
  expect(lines[2]).toMatch(/^\s*1\.5\s+1\.0\s+0\.5\s+3\.0\s+0\s+a\.test\.ts$/)
  expect(lines).toHaveLength(4)
  expect(lines[3]).toBe('3 files: 10.8 s CPU (1.3 s in workers, 9.5 s in reaped children), 4 dsh processes started')
})

test('a vitest run with DSH_TEST_PROFILE_DIR leaves one record per file with its dsh launches and the CPU of the children it reaped', () => {
  const root = mkdtempSync(join(tmpdir(), 'dsh-file-profile-'))
  try {
    const profiles = join(root, 'profiles')
    mkdirSync(profiles)
    mkdirSync(join(root, 'fake/bin'), { recursive: true })
    // A stand-in launcher that burns a little CPU, so the children's CPU is above zero.
    writeFileSync(
      join(root, 'fake/bin/dsh.js'),
      'let x = 0; const end = Date.now() + 300; while (Date.now() < end) x++\n',
    )
    writeFileSync(
      join(root, 'launches.test.mjs'),
      [
        `import { execFile, spawnSync, execFileSync } from 'node:child_process'`,
        `import { promisify } from 'node:util'`,
        `import { expect, test } from 'vitest'`,
        `test('launches', async () => {`,
        // The count must not change what a test sees: promisify(execFile) still resolves { stdout, stderr }.
        `  const { stdout } = await promisify(execFile)(process.execPath, ['-e', 'process.stdout.write("out")', ${JSON.stringify(join(root, 'fake/bin/dsh.js'))}])`,
        `  expect(stdout).toBe('out')`,
        `  spawnSync(process.execPath, [${JSON.stringify(join(root, 'fake/bin/dsh.js'))}])`,
        `  execFileSync(process.execPath, [${JSON.stringify(join(root, 'fake/bin/dsh.js'))}])`,
        `  spawnSync(process.execPath, ['-e', '0'])`,
        `})`,
      ].join('\n'),
    )
    writeFileSync(
      join(root, 'vitest.config.mjs'),
      `export default { test: { include: ['*.test.mjs'], setupFiles: [${JSON.stringify(join(repo, 'scripts/file-profile-setup.mjs'))}] } }\n`,
    )
    const run = spawnSync(
      join(repo, 'node_modules/.bin/vitest'),
      ['run', '--root', root, '--config', join(root, 'vitest.config.mjs')],
      {
        cwd: root,
        env: { ...process.env, DSH_TEST_PROFILE_DIR: profiles },
        encoding: 'utf8',
      },
    )
    expect(run.status, run.stdout + run.stderr).toBe(0)
    const [record, ...others] = readProfiles(profiles)
    expect(others).toEqual([])
    expect(record.file).toBe(join(root, 'launches.test.mjs'))
    expect(record.dshLaunches).toBe(3) // spawnSync, execFileSync and the promisified execFile
    expect(record.childCpuMs).toBeGreaterThan(0)
    expect(record.workerCpuMs).toBeGreaterThan(0)
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
})
