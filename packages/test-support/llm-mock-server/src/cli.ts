// `dsh-mock-llm`: the mock server as its own process, scripted over its control API (POST
// /__mock/enqueue) or from a --script file. Prints one line, `listening on <url>`, then serves until
// SIGINT/SIGTERM. A usage mistake exits 2 with one message and no stack.
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { MockServerError } from './options.ts'
import { checkScript } from './script.ts'
import { startMockServer } from './server.ts'

const USAGE = 'usage: dsh-mock-llm [--port N] [--host H] [--script replies.json] [--repeat] [--chunk-chars N]'

function number(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  if (!/^\d+$/.test(value))
    throw new MockServerError(
      'MOCK_BAD_OPTIONS',
      `dsh-mock-llm: --${flag} wants a non-negative integer, got "${value}"`,
    )
  return Number(value)
}

async function main() {
  const { values } = parseArgs({
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      script: { type: 'string' },
      repeat: { type: 'boolean' },
      'chunk-chars': { type: 'string' },
      help: { type: 'boolean' },
    },
    strict: true,
    allowPositionals: false,
  })
  if (values.help) {
    process.stdout.write(`${USAGE}\n`)
    return
  }
  const options = Object.fromEntries(
    Object.entries({
      port: number('port', values.port),
      host: values.host,
      repeat: values.repeat,
      chunkChars: number('chunk-chars', values['chunk-chars']),
    }).filter(([, value]) => value !== undefined),
  )
  let script: unknown[] = []
  if (values.script) {
    let text: string
    try {
      text = readFileSync(values.script, 'utf8')
    } catch (error) {
      throw new MockServerError(
        'MOCK_BAD_SCRIPT',
        `dsh-mock-llm: cannot read --script ${values.script}: ${(error as Error).message}`,
      )
    }
    try {
      script = [JSON.parse(text)].flat()
    } catch (error) {
      throw new MockServerError(
        'MOCK_BAD_SCRIPT',
        `dsh-mock-llm: --script ${values.script} is not JSON: ${(error as Error).message}`,
      )
    }
  }
  const replies = checkScript(script, values.script ?? 'script')
  const server = await startMockServer(options)
  server.enqueue(...replies)
  process.stdout.write(`listening on ${server.url}\n`)
  const stop = () => void server.close().then(() => process.exit(0))
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}

main().catch((error) => {
  const known = error instanceof MockServerError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
  const message = (error as Error).message
  const named =
    message.startsWith('dsh-mock-llm:') || message.startsWith('llm-mock-server:') ? message : `dsh-mock-llm: ${message}`
  process.stderr.write(known ? `${named}\n${USAGE}\n` : `dsh-mock-llm: ${(error as Error).stack ?? error}\n`)
  process.exit(known ? 2 : 1)
})
