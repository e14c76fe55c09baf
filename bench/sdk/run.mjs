// The SDK surface end to end: the TypeScript SDK drives the real runtime (`dsh --profile sdk`, a child process)
// whose DeepSeek adapter talks to the mock model server over HTTP. Round-trip latency of a prompt with an
// instant model (minus the mock's own time), and how many session events per second reach the client.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Harness } from '@dsh/sdk'
import { serverTimeMs, startMockServer } from '@dsh/llm-mock-server'
import { ms, summarize } from '../stats.mjs'

const WARMUP = 5
const PROMPTS = 60
const CHUNKS = 20_000

const now = () => performance.now()

export default async function run() {
  const home = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-bench-sdk-home-')))
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-bench-sdk-ws-')))
  const llm = await startMockServer()
  const startedAt = now()
  const harness = await Harness.start({
    cwd: workspace,
    minimal: true,
    env: { DSH_HOME: home, DEEPSEEK_BASE_URL: llm.url, DEEPSEEK_API_KEY: 'bench' },
  })
  const startup = now() - startedAt
  try {
    const session = await harness.session()
    const roundTrips = []
    const overheads = []
    for (let i = 0; i < WARMUP + PROMPTS; i++) {
      llm.reset()
      llm.enqueue({ text: 'pong', usage: { input: 10, output: 1 } })
      const started = now()
      const result = await session.run(`ping ${i}`)
      const elapsed = now() - started
      if (result.reason !== 'completed')
        throw new Error(`bench sdk: a prompt ended ${result.reason}: ${JSON.stringify(result.error)}`)
      if (i < WARMUP) continue
      roundTrips.push(elapsed)
      overheads.push(elapsed - serverTimeMs(llm.requests))
    }

    llm.reset()
    llm.enqueue({ text: Array.from({ length: CHUNKS }, (_, i) => `w${i % 10} `) })
    const flood = await harness.session()
    let events = 0
    let first
    let last
    for await (const event of flood.stream('flood')) {
      events++
      first ??= now()
      last = now()
      if (event.type === 'turn/end' && event.data.reason !== 'completed')
        throw new Error(`bench sdk: the flood ended ${event.data.reason}`)
    }
    const floodMs = last - first
    const serverMs = serverTimeMs(llm.requests)

    const rt = summarize(roundTrips)
    const over = summarize(overheads)
    return [
      '## SDK surface (bench/sdk)',
      '',
      `The TypeScript SDK drives \`dsh --profile sdk --patch minimal\` (a child process); its DeepSeek adapter streams from the mock server over HTTP; JSONL persistence on. ${PROMPTS} prompts after ${WARMUP} warm-up, each answered at once with one short text.`,
      '',
      '| measurement | result | target |',
      '|---|---|---|',
      `| runtime start + initialize (Harness.start) | ${ms(startup)} | — |`,
      `| prompt round trip (send → idle), median / p90 | ${ms(rt.median)} / ${ms(rt.p90)} | — |`,
      `| of which harness overhead (minus the mock's own time), median / p90 | ${ms(over.median)} / ${ms(over.p90)} | — |`,
      `| event throughput to the client (${CHUNKS.toLocaleString('en')} chunks, ${events.toLocaleString('en')} events) | ${Math.round(events / (floodMs / 1000)).toLocaleString('en')} events/s | — |`,
      `| the mock's own time for that stream | ${ms(serverMs)} of ${ms(floodMs)} | — |`,
    ].join('\n')
  } finally {
    await harness.close()
    await llm.close()
    rmSync(home, { recursive: true, force: true })
    rmSync(workspace, { recursive: true, force: true })
  }
}
