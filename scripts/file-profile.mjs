// Where a test run's time goes, file by file: which command lines are a `dsh` launch (counted by
// scripts/file-profile-setup.mjs in each vitest worker) and the table scripts/test-all.mjs prints from the records.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { basename, join, relative } from 'node:path'

/** The launcher's entry points: the checkout's bin and dist entry, the bundled bin and entry, an installed `dsh`. */
const LAUNCHER = /(^|\/)(bin\/dsh\.js|apps\/cli\/dist\/bin\.js|dist\/dsh\.mjs)$/

/** Whether `command args` starts dsh: node with a launcher script, the launcher itself, or `dsh` on PATH. */
export function isDshLaunch(command, args) {
  if (typeof command !== 'string') return false
  if (basename(command) === 'dsh' || LAUNCHER.test(command)) return true
  return args.some(
    (arg) =>
      typeof arg === 'string' && (LAUNCHER.test(arg) || /(^|[\s/'"])(bin\/dsh\.js|dist\/dsh\.mjs)(['"\s]|$)/.test(arg)),
  )
}

/** The records the workers wrote into `dir`, one per test file that reached its end. */
export function readProfiles(dir) {
  if (!existsSync(dir)) return []
  return readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .map((name) => JSON.parse(readFileSync(join(dir, name), 'utf8')))
}

const seconds = (ms) => (ms === null || ms === undefined ? '?' : (ms / 1000).toFixed(1))

/** The `limit` files with the most CPU (worker + reaped children), as a fixed-width table with a totals line. */
export function renderProfiles(records, root, limit = 30) {
  const cpuOf = (record) => record.workerCpuMs + (record.childCpuMs ?? 0)
  const sorted = [...records].sort((a, b) => cpuOf(b) - cpuOf(a))
  const rows = sorted
    .slice(0, limit)
    .map((record) => [
      seconds(cpuOf(record)),
      seconds(record.workerCpuMs),
      seconds(record.childCpuMs),
      seconds(record.wallMs),
      String(record.dshLaunches),
      relative(root, record.file),
    ])
  const total = (pick) => records.reduce((sum, record) => sum + (pick(record) ?? 0), 0)
  const header = ['cpu s', 'worker s', 'children s', 'wall s', 'dsh', 'file']
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)))
  const line = (row) =>
    row.map((cell, column) => (column === row.length - 1 ? cell : cell.padStart(widths[column]))).join('  ')
  return [
    line(header),
    ...rows.map(line),
    `${records.length} files: ${seconds(total(cpuOf))} s CPU (${seconds(total((r) => r.workerCpuMs))} s in workers, ${seconds(total((r) => r.childCpuMs))} s in reaped children), ${total((r) => r.dshLaunches)} dsh processes started`,
  ].join('\n')
}
