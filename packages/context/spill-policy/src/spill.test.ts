import { readFileSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import type { LlmRequest, ToolResultBlock } from '@dsh/llm'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'
import { tempDir } from '@dsh/test-harness/world'

const patch = (policy = '{}', store = '{}') =>
  scriptedPatch(
    { fixtureTools: true },
    `- id: spill-policy
  config: ${policy}
- id: spill
  config: ${store}
`,
  )

/** Exactly 1 MiB of numbered lines. */
function megabyte(): string {
  const lines: string[] = []
  let size = 0
  for (let i = 1; size < 1024 * 1024; i++) {
    const line = `line ${String(i).padStart(6, '0')} ${'.'.repeat(50)}\n`
    lines.push(line)
    size += line.length
  }
  return lines.join('').slice(0, 1024 * 1024)
}

let h: Harness
afterEach(async () => h?.dispose())

const textOf = (content: readonly { type: string; text?: string }[]) =>
  content.map((block) => block.text ?? '').join('')

describe('spilling oversized tool output', () => {
  test('a 1 MB result is written to a 0600 file under $DSH_HOME/spill, previewed in the log, and read back by the model through `read`', async () => {
    const big = megabyte()
    h = await bootComposition({ patch: patch(), workspaceFiles: { 'huge.log': big } })
    let spilledPath = ''
    h.root.on('llm/stream', (request: LlmRequest, next) => {
      const last = request.messages.at(-1)!
      if (last.role === 'user') h.root.scriptedLlm.enqueue(toolCall('big', 'read_file', { path: 'huge.log' }))
      else if (!spilledPath) {
        spilledPath = /saved at (\S+);/.exec(textOf((last.content[0] as ToolResultBlock).content))![1]!
        h.root.scriptedLlm.enqueue(toolCall('back', 'read', { path: spilledPath, offset: 10_000, limit: 3 }))
      } else h.root.scriptedLlm.enqueue({ text: 'I have read lines 10000 to 10002.' })
      return next()
    })
    const result = await h.run('look at huge.log')
    expect(result.reason).toBe('completed')

    const logged = textOf(h.events('tool/result').find((event) => event.data.callId === 'big')!.data.content)
    expect(Buffer.byteLength(logged)).toBeLessThan(8000)
    expect(logged).toContain('1,048,576 bytes')
    expect(logged).toContain(`saved at ${spilledPath};`)
    expect(logged).toMatch(/^\[Output too large/)
    expect(logged).toContain('line 000001')
    expect(logged.trimEnd().endsWith(big.trimEnd().slice(-40))).toBe(true)

    expect(spilledPath.startsWith(join(h.home, 'spill') + '/')).toBe(true)
    expect(readFileSync(spilledPath, 'utf8')).toBe(big)
    expect(statSync(spilledPath).mode & 0o777).toBe(0o600)
    expect(statSync(dirname(spilledPath)).mode & 0o777).toBe(0o700)

    const back = h.events('tool/result').find((event) => event.data.callId === 'back')!.data
    expect(back.error).toBeUndefined()
    const readText = textOf(back.content)
    for (const n of ['010000', '010001', '010002']) expect(readText).toContain(`line ${n}`)
    expect(readText).not.toContain('line 010003')
  })

  test('the preview names the lines it shows and the lines it leaves out', async () => {
    const text = Array.from({ length: 100 }, (_, i) => `row ${i + 1}`).join('\n')
    h = await bootComposition({ patch: patch('{ thresholdBytes: 200, headChars: 40, tailChars: 30 }') })
    h.root.scriptedLlm.enqueue(toolCall('e', 'echo', { text }), { text: 'ok' })
    await h.run('echo rows')
    const logged = textOf(h.events('tool/result')[0]!.data.content)
    const lines = logged.split('\n')
    expect(lines[0]).toMatch(
      /^\[Output too large for the conversation: 691 bytes, 100 lines\. The full output is saved at \/.+; shown here: lines 1–\d+ and \d+–100\. Read more of it/,
    )
    expect(lines[1]).toBe('row 1')
    expect(logged).toMatch(/\n\[… lines \d+–\d+ omitted …\]\n/)
    expect(lines.at(-1)).toBe('row 100')
    const [, shownHead, firstTail] = /lines 1–(\d+) and (\d+)–100/.exec(lines[0]!)!.map(Number)
    expect(lines.slice(1, 1 + shownHead!)).toEqual(Array.from({ length: shownHead! }, (_, i) => `row ${i + 1}`))
    expect(lines.slice(-(101 - firstTail!))).toEqual(
      Array.from({ length: 101 - firstTail! }, (_, i) => `row ${firstTail! + i}`),
    )
  })

  test('results under the threshold and results of exempt tools are logged as they are', async () => {
    const text = 'y'.repeat(300)
    h = await bootComposition({
      patch: patch('{ thresholdBytes: 200, exempt: [read_file] }'),
      workspaceFiles: { 'a.txt': text },
    })
    h.root.scriptedLlm.enqueue(
      {
        toolCalls: [
          { id: 's', name: 'echo', arguments: { text: 'short' } },
          { id: 'x', name: 'read_file', arguments: { path: 'a.txt' } },
        ],
      },
      { text: 'ok' },
    )
    await h.run('go')
    expect(h.events('tool/result').map((event) => textOf(event.data.content))).toEqual(['short', text])
  })

  test('when the store cannot write, the preview says so and keeps head and tail', async () => {
    const blocked = join(tempDir('dsh-spill-blocked-'), 'not-a-folder')
    writeFileSync(blocked, 'a file where the spill folder should be')
    h = await bootComposition({
      patch: patch('{ thresholdBytes: 200, headChars: 100, tailChars: 100 }', `{ dir: '${blocked}' }`),
    })
    h.root.scriptedLlm.enqueue(toolCall('e', 'echo', { text: 'z'.repeat(1000) }), { text: 'ok' })
    await h.run('echo')
    const logged = textOf(h.events('tool/result')[0]!.data.content)
    expect(logged).toMatch(
      /^\[Output too large for the conversation: 1,000 bytes, 1 line\. The full output could not be saved \(could not write the output of echo.*; shown here: the first 100 and the last 100 characters\.\]/,
    )
    expect(logged).toContain(`\n${'z'.repeat(100)}\n[… 800 characters omitted …]\n${'z'.repeat(100)}`)
  })
})
