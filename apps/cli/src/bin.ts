import { run } from './launcher.ts'

/** Said on stderr when the process had to be ended: a handle left open after the tree drained is a bug to see. */
const FORCED_EXIT_NOTE = 'dsh: a handle was still open 2 s after the end; exiting anyway'

const code = await run(process.argv.slice(2))
process.exitCode = code
// A handle left open by a plugin after the tree drained must not keep the process alive.
setTimeout(() => (process.stderr.write(`${FORCED_EXIT_NOTE}\n`), process.exit(code)), 2000).unref()
