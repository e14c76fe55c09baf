import { createServer } from 'node:net'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import type { BridgeReply, CodeRunRequest, CodeRunResult } from '@dsh/code-runtime'
import { bootComposition, scriptedPatch, type Harness } from '@dsh/test-harness'

// The program is hostile: each test is an attack on the runtime the bundle mounts (row `code-runtime`),
// asserting what the program could reach, not what it printed about itself.

let h: Harness
beforeAll(async () => {
  // A small heap, so the memory bomb reaches it quickly.
  h = await bootComposition({ patch: scriptedPatch({}, '- id: code-runtime\n  config: { memoryMb: 24 }\n') })
}, 60_000)
afterAll(() => h?.dispose())

const calls: { name: string; args: string }[] = []
const echo = async (name: string, args: string): Promise<BridgeReply> => {
  calls.push({ name, args })
  if (name === 'refuse') return { ok: false, code: 'DENIED', message: 'no' }
  return { ok: true, text: `${name}:${args}` }
}

function run(code: string, options: Partial<CodeRunRequest> = {}): Promise<CodeRunResult> {
  return h.root.codeRuntime.run({
    code,
    tools: ['read', 'refuse'],
    timeoutMs: 20_000,
    signal: new AbortController().signal,
    call: echo,
    ...options,
  })
}

const value = (result: CodeRunResult) => {
  expect(result.error).toBeUndefined()
  return JSON.parse(result.value!)
}

test('a program returns JSON, prints, and its typed calls reach the bridge as JSON text', async () => {
  const result = await run(`
    interface Args { path: string }
    const args: Args = { path: 'a.txt' }
    const text: string = await read(args)
    console.log('got', text, { n: 1 })
    return { text, also: await tools.read({ path: 'b' }) }`)
  expect(value(result)).toEqual({ text: 'read:{"path":"a.txt"}', also: 'read:{"path":"b"}' })
  expect(result.output).toBe('got read:{"path":"a.txt"} {\n  "n": 1\n}\n')
  expect(result.toolCalls).toBe(2)
})

test('process, require, import(), fetch, timers, eval and any message port are not in the program', async () => {
  const result = await run(`
    const seen: Record<string, string> = {}
    for (const name of ['process', 'require', 'module', 'fetch', 'setTimeout', 'setImmediate', 'Buffer', 'parentPort', 'workerData', 'postMessage', 'onmessage', 'MessageChannel', 'MessagePort', 'BroadcastChannel', 'WebAssembly'])
      seen[name] = typeof (globalThis as any)[name]
    try { await import('node:fs'); seen.import = 'loaded' } catch (error) { seen.import = (error as Error).name }
    try { seen.eval = String(eval('1 + 1')) } catch (error) { seen.eval = (error as Error).name }
    try { seen.Function = String(new Function('return 1')()) } catch (error) { seen.Function = (error as Error).name }
    return seen`)
  const seen = value(result)
  for (const name of [
    'process',
    'require',
    'module',
    'fetch',
    'setTimeout',
    'setImmediate',
    'Buffer',
    'parentPort',
    'workerData',
    'postMessage',
    'onmessage',
    'MessageChannel',
    'MessagePort',
    'BroadcastChannel',
  ])
    expect(seen[name], name).toBe('undefined')
  expect(seen.import).not.toBe('loaded')
  expect(seen.eval).toBe('EvalError')
  expect(seen.Function).toBe('EvalError')
})

test('every object the bridge hands the program is of its own realm: no constructor chain leads to the host', async () => {
  const result = await run(`
    const realm = (x: any) => x === undefined || x === null ? 'none' :
      (Object.getPrototypeOf(x) === Function.prototype || Object.getPrototypeOf(x) === Object.prototype ||
       Object.getPrototypeOf(x) === Promise.prototype || x instanceof Error) && x.constructor.constructor === Function ? 'own' : 'foreign'
    const out: Record<string, string> = {}
    out.global = realm(globalThis.constructor)
    out.read = realm(read)
    out.tools = Object.getPrototypeOf(tools) === null && Object.isFrozen(tools) ? 'own' : 'foreign'
    out.console = realm(console)
    out.log = realm(console.log)
    const pending = read({ path: 'x' })
    out.promise = realm(pending)
    out.then = realm(pending.then)
    await pending
    try { await (globalThis as any).refuse({}) } catch (error: any) {
      out.thrown = realm(error)
      out.thrownIsToolCallError = String(error instanceof ToolCallError && error.code === 'DENIED' && error.tool === 'refuse')
    }
    try { await read(1 as any) } catch (error: any) { out.badArgs = realm(error) }
    try { await read({ n: 10n ** 400n } as any) } catch (error: any) { out.bigint = realm(error) }
    const chain = (x: any) => { try { return String(x.constructor.constructor('return typeof process')()) } catch (e: any) { return e.name } }
    out.chainRead = chain(read)
    out.chainPromise = chain(pending)
    out.chainConsole = chain(console.log)
    return out`)
  const out = value(result)
  for (const [key, seen] of Object.entries(out))
    if (!['thrownIsToolCallError', 'chainRead', 'chainPromise', 'chainConsole'].includes(key))
      expect(seen, key).toBe('own')
  expect(out.thrownIsToolCallError).toBe('true')
  // The program's own Function refuses to compile strings; a host Function would have answered "object".
  expect([out.chainRead, out.chainPromise, out.chainConsole]).toEqual(['EvalError', 'EvalError', 'EvalError'])
})

test('stack frames give no host function or receiver (Error.prepareStackTrace, a stack overflow at the bridge)', async () => {
  const result = await run(`
    const found: string[] = []
    ;(Error as any).prepareStackTrace = (_error: unknown, frames: any[]) => {
      for (const frame of frames) {
        for (const get of ['getThis', 'getFunction']) {
          const x = frame[get]?.()
          if (x !== undefined && x !== null) {
            try { found.push(get + ':' + String(x.constructor.constructor('return typeof process')())) } catch (e: any) { found.push(get + ':' + e.name) }
          }
        }
      }
      return 'trace'
    }
    await read({ path: 'x' }).then(() => { new Error('probe').stack })
    new Error('probe').stack
    let depth = 0
    const deep = (): unknown => { depth++; try { return deep() } catch (error: any) { return read({ path: 'edge' }).catch((e: any) => e) } }
    const edge: any = deep()
    const error = await edge
    if (error && typeof error === 'object') {
      try { found.push('edge:' + String(error.constructor.constructor('return typeof process')())) } catch (e: any) { found.push('edge:' + e.name) }
    }
    return found`)
  const found: string[] = value(result)
  // Whatever a frame gave (strict frames give nothing), no Function behind it compiled a string.
  expect(found.filter((entry) => entry.endsWith(':object'))).toEqual([])
})

test('the worker has no environment: a secret of the host process is nowhere a program can look', async () => {
  process.env.DSH_CODE_TEST_SECRET = 'hunter2-code'
  const result = await run(`
    const seen: string[] = []
    const visit = (x: any, depth: number) => {
      if (depth > 3 || x === null || (typeof x !== 'object' && typeof x !== 'function')) return
      for (const key of Object.getOwnPropertyNames(x)) {
        let v: any
        try { v = x[key] } catch { continue }
        if (typeof v === 'string' && v.includes('hunter2')) seen.push(key)
        visit(v, depth + 1)
      }
    }
    visit(globalThis, 0)
    return seen`)
  delete process.env.DSH_CODE_TEST_SECRET
  expect(value(result)).toEqual([])
})

test('no file system and no network of its own: nothing written, no connection made', async () => {
  const marker = join(h.workspace, 'pwned.txt')
  let connections = 0
  const server = createServer((socket) => {
    connections++
    socket.destroy()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  const result = await run(`
    const g: any = globalThis
    const attempts: string[] = []
    for (const f of [() => g.fetch('http://127.0.0.1:${port}/'), () => new g.WebSocket('ws://127.0.0.1:${port}/'), () => new g.XMLHttpRequest(), () => g.require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'x'), () => g.process.binding('fs')]) {
      try { await f(); attempts.push('ran') } catch (error: any) { attempts.push(error.name) }
    }
    return attempts`)
  await new Promise<void>((resolve) => server.close(() => resolve()))
  expect(existsSync(marker)).toBe(false)
  expect(connections).toBe(0)
  expect(value(result)).not.toContain('ran')
})

test('an endless loop ends at its wall time while the host keeps answering', async () => {
  let ticks = 0
  const ticker = setInterval(() => ticks++, 5)
  const started = Date.now()
  const result = await run('while (true) {}', { timeoutMs: 600 })
  clearInterval(ticker)
  expect(result.error?.code).toBe('CODE_TIMEOUT')
  expect(result.error?.message).toMatch(/ran longer than its 600 ms/)
  expect(Date.now() - started).toBeGreaterThanOrEqual(600)
  // The host's event loop ran meanwhile (a frozen host would have ticked at most once).
  expect(ticks).toBeGreaterThan(5)
})

test('a memory bomb ends at the memory limit with a clear error, and the next program runs', async () => {
  const bomb = run(`
    const hoard: unknown[] = []
    while (true) hoard.push(new Array(100_000).fill({ a: Math.random() }))`)
  // Another program (as another tool call would) is answered while the bomb grows.
  const other = await run('return await read({ path: "meanwhile" })')
  expect(value(other)).toBe('read:{"path":"meanwhile"}')
  const result = await bomb
  expect(result.error?.code).toBe('CODE_MEMORY')
  expect(result.error?.message).toMatch(/more than its \d+ MB of memory/)
  expect(value(await run('return 1 + 1'))).toBe(2)
})

test('a cancel ends the program at once', async () => {
  const controller = new AbortController()
  const running = run('while (true) {}', { signal: controller.signal, timeoutMs: 60_000 })
  setTimeout(() => controller.abort(), 50)
  const result = await running
  expect(result.error?.code).toBe('ABORTED')
})

test('errors carry the line and column in the code as the model wrote it (types and all)', async () => {
  const thrown = await run(`type T = { a: number }
const t: T = { a: 1 }

  ;(null as any).boom`)
  expect(thrown.error?.code).toBe('CODE_THROWN')
  expect(thrown.error?.message).toMatch(/TypeError/)
  expect(thrown.error?.position).toEqual({ line: 4, column: 18 })
  const syntax = await run('const a = 1\nconst b = (\n')
  expect(syntax.error?.code).toBe('CODE_SYNTAX')
  expect(syntax.error?.position?.line).toBeGreaterThanOrEqual(2)
  const caught = await run(
    `try { await refuse({}) } catch (error) { if (error instanceof ToolCallError) return error.code }`,
  )
  expect(value(caught)).toBe('DENIED')
  const stuck = await run('await new Promise(() => {})')
  expect(stuck.error?.message).toMatch(/nothing will settle/)
})

test('output is capped, calls are counted, and only the functions given are callable', async () => {
  const loud = await run(`for (let i = 0; i < 200_000; i++) console.log('line ' + i)`)
  expect(loud.output.length).toBeLessThanOrEqual(100_000)
  expect(loud.outputDropped).toBeGreaterThan(0)
  const before = calls.length
  const unknown = await run(`return typeof (globalThis as any).write + ',' + Object.keys(tools).join(',')`)
  expect(value(unknown)).toBe('undefined,read,refuse')
  expect(calls.length).toBe(before)
})
