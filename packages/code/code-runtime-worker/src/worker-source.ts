// The worker thread's own code (docs/architecture.md, "Code mode"), run with `eval: true` so it needs no file
// beside the built module (the packaged launcher moves modules). It holds the only message port; the program
// runs in a `node:vm` context with an ordinary global of its own (`DONT_CONTEXTIFY`: no host object behind
// it), strings and WebAssembly compilation refused, and the prelude of ./prelude.ts as its one way out.
// Kept free of backticks and dollar-brace: it is a template literal's text.
export const WORKER_SOURCE = `'use strict';
const { parentPort, workerData } = require('node:worker_threads')
const vm = require('node:vm')
const post = (message) => parentPort.postMessage(message)
let control
let handled = 0
const pump = () => {
  let batch
  try {
    batch = control('drain')
  } catch (error) {
    batch = undefined
  }
  if (typeof batch !== 'string') return post({ type: 'broken', message: 'the program broke the bridge (its drain returned no text)' })
  post({ type: 'batch', batch, handled })
}
try {
  if (!vm.constants || vm.constants.DONT_CONTEXTIFY === undefined) throw new Error('this Node has no vm.constants.DONT_CONTEXTIFY')
  const context = vm.createContext(vm.constants.DONT_CONTEXTIFY, {
    name: 'dsh program',
    codeGeneration: { strings: false, wasm: false },
  })
  const install = new vm.Script(workerData.prelude, { filename: 'dsh:prelude' }).runInContext(context)
  control = install(workerData.config)
  let program
  try {
    program = new vm.Script(workerData.program, { filename: 'program.js' }).runInContext(context)
  } catch (error) {
    post({ type: 'syntax', message: String(error && error.message), stack: String(error && error.stack) })
    program = undefined
  }
  if (program !== undefined) {
    parentPort.on('message', (message) => {
      if (message && message.type === 'reply' && typeof message.id === 'number' && typeof message.reply === 'string') {
        handled++
        try { control('reply', message.id, message.reply) } catch (error) { return post({ type: 'broken', message: 'the program broke the bridge' }) }
      }
      setImmediate(pump)
    })
    control('start', program)
    setImmediate(pump)
  }
} catch (error) {
  post({ type: 'broken', message: 'the program could not be started: ' + String(error && error.message) })
}
`
