import { run } from './launcher.ts'

const code = await run(process.argv.slice(2))
process.exitCode = code
// A handle left open by a plugin after the tree drained must not keep the process alive.
setTimeout(() => process.exit(code), 2000).unref()
