// Drives dsh from TypeScript/JavaScript with @dsh/sdk against a real model provider.
//   node examples/sdk-ts/run.mjs [--minimal] ["a task"]
// Needs the key of the model's provider (DEEPSEEK_API_KEY by default; DSH_MODEL picks another model) and a
// built checkout (`npm run setup`). In an application, import from '@dsh/sdk' instead of the path below.
import { Harness } from '../../packages/sdk/sdk-client/dist/index.js'

const KEYS = { deepseek: 'DEEPSEEK_API_KEY', anthropic: 'ANTHROPIC_API_KEY', openai: 'OPENAI_API_KEY' }
const model = process.env.DSH_MODEL ?? 'deepseek/deepseek-v4-flash'
const provider = model.includes('/') ? model.slice(0, model.indexOf('/')) : 'deepseek'
const key = KEYS[provider]
if (key && !process.env[key]) {
  console.error(`examples/sdk-ts: set ${key} to run against ${provider} (skipped)`)
  process.exit(0)
}

const args = process.argv.slice(2)
const minimal = args.includes('--minimal')
const task = args.filter((arg) => arg !== '--minimal').join(' ') || 'List the files in this directory and say in one sentence what the project is.'

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
  console.error(`dsh ${harness.info.serverInfo.version}, model ${model}${minimal ? ' (minimal)' : ''}`)
  const session = await harness.session()
  let reason = 'unknown'
  for await (const event of session.stream(task)) {
    if (event.type === 'assistant/chunk' && event.data.kind === 'text') process.stdout.write(event.data.text)
    if (event.type === 'tool/call') console.error(`\n[tool] ${event.data.name} ${JSON.stringify(event.data.arguments).slice(0, 120)}`)
    if (event.type === 'turn/end') reason = event.data.reason
  }
  console.log(`\n\n(turn ${reason}; session ${session.id})`)
} finally {
  await harness.close()
}
