// A vitest setup file (vitest.config.ts): when DSH_TEST_PROFILE_DIR names a folder (scripts/test-all.mjs sets it),
// each test file writes one record there: the CPU its worker process spent while the file ran, the CPU of the child
// processes the worker reaped in that time, and how many `dsh` processes the file started. scripts/test-all.mjs
// prints the slowest files from these records at the end of every run (docs/quality.md, "Where the time goes").
import { createRequire, syncBuiltinESMExports } from 'node:module'
import { readFileSync, writeFileSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, expect } from 'vitest'
import { isDshLaunch } from './file-profile.mjs'

const dir = process.env.DSH_TEST_PROFILE_DIR
const require = createRequire(import.meta.url)

/**
 * CPU of reaped children in ms, from /proc/self/stat (cutime + cstime, in USER_HZ = 100 ticks a second on Linux):
 * every child the worker waited for, and what those children waited for in turn. A child still running when the
 * file ends (or never reaped) is not in it. Undefined off Linux.
 */
function childCpuMs() {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    // fields[0] is field 3 of proc(5) (state); cutime and cstime are fields 16 and 17.
    return (Number(fields[13]) + Number(fields[14])) * 10
  } catch {
    return undefined
  }
}

if (dir) {
  // One counter a process, however often this file is evaluated (once a test file under isolation).
  const counter = (globalThis[Symbol.for('dsh.test.dshLaunches')] ??= patchLaunches())
  // Taken when vitest runs this setup file, before it imports the test file: loading the file's modules counts.
  const start = { cpu: process.cpuUsage(), children: childCpuMs(), wall: performance.now(), launches: counter.launches }
  // Registered before the file's own hooks, so it runs after its afterAll hooks (vitest runs after-hooks as a stack).
  afterAll(() => {
    const file = expect.getState().testPath
    if (!file) return
    const cpu = process.cpuUsage(start.cpu)
    const children = childCpuMs()
    const record = {
      file,
      workerCpuMs: Math.round((cpu.user + cpu.system) / 1000),
      childCpuMs: children === undefined || start.children === undefined ? null : children - start.children,
      wallMs: Math.round(performance.now() - start.wall),
      dshLaunches: counter.launches - start.launches,
    }
    const name = createHash('sha1').update(file).digest('hex').slice(0, 16)
    writeFileSync(join(dir, `${name}.json`), `${JSON.stringify(record)}\n`)
  })
}

/** Wraps each way a test starts a process, counting those whose command line is the dsh launcher. */
function patchLaunches() {
  const counter = { launches: 0 }
  const childProcess = require('node:child_process')
  for (const name of ['spawn', 'spawnSync', 'execFile', 'execFileSync', 'fork']) {
    const original = childProcess[name]
    const counted = function counted(command, args, ...rest) {
      if (isDshLaunch(command, Array.isArray(args) ? args : [])) counter.launches++
      return original.call(this, command, args, ...rest)
    }
    // `promisify(execFile)` resolves `{ stdout, stderr }` through this symbol; without it, only stdout.
    const custom = original[promisify.custom]
    if (custom)
      counted[promisify.custom] = (...args) => (
        isDshLaunch(args[0], Array.isArray(args[1]) ? args[1] : []) && counter.launches++,
        custom(...args)
      )
    childProcess[name] = counted
  }
  // The ES module bindings (`import { spawn } from 'node:child_process'`) follow the patched functions.
  syncBuiltinESMExports()
  return counter
}
