// Drives dsh from TypeScript/JavaScript with @dsh/sdk against a real model provider.
//   node examples/sdk-ts/run.mjs [--minimal] ["a task"]
// Needs the key of the model's provider (DEEPSEEK_API_KEY by default, in the environment or saved in
// $DSH_HOME/.credentials.yaml; DSH_MODEL picks another model) and a built checkout (`npm run setup`). Prints
// the answer on stdout, tools and the outcome on stderr; exits 1 when the turn did not complete. In an
// application, import from '@dsh/sdk' instead of the path below.
import { Harness } from '../../packages/sdk/sdk-client/dist/index.js'

const args = process.argv.slice(2)
const minimal = args.includes('--minimal')
const task =
  args.filter((arg) => arg !== '--minimal').join(' ') ||
  'List the files in this directory and say in one sentence what the project is.'

const harness = await Harness.start({
  minimal,
  stderr: 'inherit',
  // A person would decide here; this example refuses anything that needs approval and says what it was.
  onApproval: (request) => {
    console.error(`\n[approval refused] ${request.tool}: ${request.summary} (${request.reason})`)
    return 'reject'
  },
})
try {
  console.error(`dsh ${harness.info.serverInfo.version}${minimal ? ' (minimal)' : ''}`)
  const session = await harness.session()
  let end = { reason: 'unknown' }
  let midLine = false
  for await (const event of session.stream(task)) {
    if (event.type === 'assistant/chunk' && event.data.kind === 'text') {
      process.stdout.write(event.data.text)
      midLine = !event.data.text.endsWith('\n')
    }
    // One answer per model request: end the line, so the next step's text does not run on from this one.
    if (event.type === 'assistant/message' && midLine) {
      process.stdout.write('\n')
      midLine = false
    }
    if (event.type === 'model/route') console.error(`[model] ${event.data.route.provider}/${event.data.route.model}`)
    if (event.type === 'tool/call')
      console.error(`[tool] ${event.data.name} ${JSON.stringify(event.data.arguments).slice(0, 120)}`)
    if (event.type === 'turn/end') end = event.data
  }
  // A missing key is such an error: its message says which variable to set and where dsh looked for it.
  const why = end.error ? `: ${end.error.code}: ${end.error.message}` : ''
  console.error(`\n(turn ${end.reason}${why}; session ${session.id})`)
  process.exitCode = end.reason === 'completed' ? 0 : 1
} finally {
  await harness.close()
}
