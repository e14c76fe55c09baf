// The program's side of the bridge (docs/architecture.md, "Code mode"), evaluated inside the program's context
// before the program, so every function, promise and error the program meets is of the context's own realm.
// It evaluates to `install(configJson)`, which returns `control(op, a, b)`: the worker calls it with strings
// and numbers (and once with the program's function, itself a context object) and gets back only strings.
// The program never holds `control`, and nothing of the host is ever in the context (no host function either:
// the worker polls `control('drain')` after each of its own messages, so the context needs no callback).
// Kept free of backticks and dollar-brace: it is a template literal's text.
export const PRELUDE = `'use strict';
(function install(configJson) {
  const parse = JSON.parse
  const stringify = JSON.stringify
  const toText = String
  const config = parse(configJson)
  const queue = []
  const waiting = new Map()
  let nextId = 0
  let calls = 0
  let out = ''
  let room = config.maxOutputChars
  let dropped = 0
  let done = null
  let started = false

  class ToolCallError extends Error {
    constructor(tool, code, message) {
      super(message)
      this.name = 'ToolCallError'
      this.tool = tool
      this.code = code
    }
  }

  const jsonReplacer = (key, value) => (typeof value === 'bigint' ? toText(value) : value)
  const describe = (value) => {
    if (typeof value === 'string') return value
    if (value instanceof Error) return (value.stack && typeof value.stack === 'string') ? value.stack : value.name + ': ' + value.message
    try {
      const text = stringify(value, jsonReplacer, 2)
      return text === undefined ? toText(value) : text
    } catch (error) {
      try { return toText(value) } catch (again) { return '[unprintable]' }
    }
  }
  const print = (...values) => {
    let line = values.map(describe).join(' ') + '\\n'
    if (line.length > room) {
      dropped += line.length - room
      line = line.slice(0, room)
    }
    room -= line.length
    out += line
  }

  const call = (name, args) => {
    calls++
    if (calls > config.maxToolCalls)
      return Promise.reject(new ToolCallError(name, 'CODE_LIMIT', 'the program may make at most ' + config.maxToolCalls + ' tool calls'))
    let text
    try {
      text = stringify(args === undefined ? {} : args, jsonReplacer)
    } catch (error) {
      return Promise.reject(new TypeError(name + ': its arguments are not JSON (' + describe(error) + ')'))
    }
    if (typeof text !== 'string' || text[0] !== '{')
      return Promise.reject(new TypeError(name + ': its arguments must be one object'))
    const id = ++nextId
    return new Promise((resolve, reject) => {
      waiting.set(id, { resolve, reject, name })
      queue.push({ id, name, args: text })
    })
  }

  const tools = Object.create(null)
  for (const name of config.tools) {
    const fn = { [name]: (args) => call(name, args) }[name]
    tools[name] = fn
    if (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) && !(name in globalThis))
      Object.defineProperty(globalThis, name, { value: fn, enumerable: false })
  }
  Object.freeze(tools)
  const console = Object.freeze({ log: print, info: print, warn: print, error: print, debug: print })
  for (const [key, value] of [['tools', tools], ['console', console], ['ToolCallError', ToolCallError]])
    Object.defineProperty(globalThis, key, { value, writable: false, configurable: false, enumerable: false })

  const finish = (value, error, failed) => {
    if (done) return
    if (!failed) {
      try {
        const text = value === undefined ? undefined : stringify(value, jsonReplacer)
        done = text === undefined ? { ok: true } : { ok: true, value: text }
      } catch (problem) {
        done = { ok: false, message: 'the return value is not JSON: ' + describe(problem), stack: '' }
      }
      return
    }
    let message
    let stack = ''
    try {
      message = error instanceof Error ? error.name + ': ' + error.message : 'thrown: ' + describe(error)
      if (error instanceof ToolCallError) message += ' (' + error.tool + ', ' + error.code + ')'
      if (error instanceof Error && typeof error.stack === 'string') stack = error.stack
    } catch (problem) {
      message = 'the program threw a value that cannot be described'
    }
    done = { ok: false, message: toText(message), stack: toText(stack) }
  }

  return function control(op, a, b) {
    if (op === 'start') {
      if (started) return
      started = true
      let running
      try {
        running = a()
      } catch (error) {
        finish(undefined, error, true)
        return
      }
      Promise.resolve(running).then((value) => finish(value), (error) => finish(undefined, error, true))
      return
    }
    if (op === 'reply') {
      const pending = waiting.get(a)
      if (!pending) return
      waiting.delete(a)
      const reply = parse(b)
      if (reply.ok) pending.resolve(reply.text)
      else pending.reject(new ToolCallError(pending.name, reply.code, reply.message))
      return
    }
    if (op === 'drain') {
      const batch = stringify({ calls: queue.splice(0), out, dropped, done, waiting: waiting.size })
      out = ''
      dropped = 0
      return batch
    }
  }
})`
