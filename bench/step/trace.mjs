// Preloaded into a `dsh` child (`node --import bench/step/trace.mjs …`) by bench/step: writes one JSON line
// per span to $DSH_BENCH_TRACE_FILE, so the bench can say where each step's gap (a model answer's end to
// the next request) goes. Spans: every Cordis listener (its own time, a waterfall's `next()` left out),
// every child process (spawn to exit, and to its first output), every fsync/fdatasync, and each model
// request (undici's diagnostics channels). Nothing here changes what dsh does; it only times it.
import childProcess from 'node:child_process'
import diagnostics from 'node:diagnostics_channel'
import fs from 'node:fs'
import { syncBuiltinESMExports } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const file = process.env.DSH_BENCH_TRACE_FILE
if (!file) throw new Error('bench/step/trace.mjs: set DSH_BENCH_TRACE_FILE to the file the spans go to')
const fd = fs.openSync(file, 'a')
const lines = []
const span = (kind, label, start, end, extra) => lines.push(JSON.stringify({ kind, label, start, end, ...extra }))
process.on('exit', () => fs.writeSync(fd, lines.length ? lines.join('\n') + '\n' : ''))
const now = () => performance.now()

// Model requests: creation, and the end of the response (the whole streamed body received).
const started = new WeakMap()
// A request without tools (the session title's) is not a step: `step` tells them apart.
const bodyText = (body) =>
  typeof body === 'string' ? body : body instanceof Uint8Array ? Buffer.from(body).toString('utf8') : ''
diagnostics.channel('undici:request:create').subscribe(({ request }) => {
  const step = bodyText(request.body).includes('"tools"')
  started.set(request, { at: now(), step })
  span('request', `${request.method} ${request.path}`, now(), now(), { step })
})
diagnostics
  .channel('undici:request:trailers')
  .subscribe(({ request }) =>
    span('answer', request.path, started.get(request)?.at ?? now(), now(), { step: started.get(request)?.step }),
  )

// Child processes: everything (spawn, execFile, exec) goes through ChildProcess.prototype.spawn.
const label = (command, args) => {
  const name = command.split('/').at(-1)
  if (name === 'git') {
    const rest = args.slice(1)
    while (
      rest[0] === '-c' ||
      rest[0] === '--no-pager' ||
      rest[0] === '--no-optional-locks' ||
      rest[0]?.startsWith('--git-dir')
    )
      rest.splice(0, rest[0] === '-c' ? 2 : 1)
    return `git ${rest[0] ?? ''}`
  }
  // A confined command: bwrap, under the launcher (perl outside the sandbox: descriptors, fences, cgroups, limits).
  const at = args.findIndex((arg) => arg.split('/').at(-1) === 'bwrap')
  if (name === 'bwrap' || (name === 'perl' && at !== -1)) {
    const bwrapArgs = name === 'bwrap' ? args : args.slice(at + 1)
    const inner = bwrapArgs.slice(bwrapArgs.indexOf('--') + 1)
    const bridged = inner.some((arg) => arg === 'dsh-network-bridge' || arg.endsWith('/bridge.pl'))
    return `${name === 'perl' ? 'launcher + ' : ''}bwrap (${bridged ? 'proxy bridge + ' : ''}${inner.at(-1)?.split(/\s/)[0] ?? ''}…)`
  }
  return name
}
const spawnOriginal = childProcess.ChildProcess.prototype.spawn
childProcess.ChildProcess.prototype.spawn = function (options) {
  const start = now()
  const result = spawnOriginal.call(this, options)
  const name = label(options.file, options.args ?? [])
  let first
  const mark = () => (first ??= now())
  this.stdout?.once('data', mark)
  this.stderr?.once('data', mark)
  this.once('exit', () => span('process', name, start, now(), { firstOutput: first }))
  return result
}

// Durability: the log's fdatasync and file writes' fsync.
for (const key of ['fsyncSync', 'fdatasyncSync']) {
  const original = fs[key]
  fs[key] = function (...args) {
    const start = now()
    try {
      return original.apply(this, args)
    } finally {
      span('fsync', key, start, now())
    }
  }
}
for (const key of ['fsync', 'fdatasync']) {
  const original = fs[key]
  fs[key] = function (target, callback) {
    const start = now()
    return original.call(this, target, (...results) => {
      span('fsync', key, start, now())
      callback(...results)
    })
  }
}
const handle = await fs.promises.open(fileURLToPath(import.meta.url), 'r')
const FileHandle = Object.getPrototypeOf(handle)
await handle.close()
for (const key of ['sync', 'datasync']) {
  const original = FileHandle[key]
  FileHandle[key] = async function () {
    const start = now()
    try {
      return await original.call(this)
    } finally {
      span('fsync', `FileHandle.${key}`, start, now())
    }
  }
}
syncBuiltinESMExports()

// Cordis listeners: each registered callback timed; a waterfall listener's `next()` is not its own time.
const cordis = await import(
  pathToFileURL(join(fileURLToPath(import.meta.url), '../../../vendor/cordis/dist/index.js')).href
)
const register = cordis.EventsService.prototype.register
const owner = (ctx) => ctx?.fiber?.runtime?.name || ctx?.fiber?.name || ctx?.name || '?'
cordis.EventsService.prototype.register = function (labelText, name, callback, options) {
  if (typeof name !== 'string' || name.startsWith('internal/'))
    return register.call(this, labelText, name, callback, options)
  const who = `${name} ← ${owner(this.ctx)}`
  const timed = function (...args) {
    const start = now()
    let inner = 0
    const last = args.at(-1)
    if (typeof last === 'function' && last.name === 'next') {
      args[args.length - 1] = async () => {
        const entered = now()
        try {
          return await last()
        } finally {
          inner += now() - entered
        }
      }
    }
    const done = () => span('listener', who, start, now(), { inner })
    let result
    try {
      result = callback.apply(this, args)
    } catch (error) {
      done()
      throw error
    }
    if (result && typeof result.then === 'function') {
      return result.then(
        (value) => (done(), value),
        (error) => {
          done()
          throw error
        },
      )
    }
    done()
    return result
  }
  return register.call(this, labelText, name, timed, options)
}
