// Full spills (issue #18 part 2): a command's whole output reaches the spill file, not what survived the
// shell's cap. Real bash (sandboxed), real spill store, real read tool; only the model is scripted.
import { createHash } from 'node:crypto'
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'

let h: Harness
afterEach(async () => h?.dispose())

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex')
const textOf = (content: readonly { type: string; text?: string }[]) =>
  content.map((block) => block.text ?? '').join('\n')
// 5 MiB of numbered lines, also written to the workspace by the same command (tee) to compare with.
const FIVE_MB = "seq -f 'output line %09g' 1 1000000 | head -c 5242880 | tee real-output.txt"

const shells = {
  'one-shot bash': '',
  'persistent bash': "- id: tool-bash\n  name: '@dsh/tool-bash-persistent'\n",
}

describe.each(Object.entries(shells))('the %s tool', (_, row) => {
  test("a 5 MB output's spill file holds every byte, and the model reads its end through the path it is given", async () => {
    h = await bootComposition({ patch: scriptedPatch({}, row) })
    let path = ''
    h.root.on('llm/stream', (request, next) => {
      const last = request.messages.at(-1)!
      if (last.role === 'user') h.root.scriptedLlm.enqueue(toolCall('big', 'bash', { command: FIVE_MB }))
      else if (!path) {
        const shown = textOf((last.content[0] as { content: { type: string; text?: string }[] }).content)
        path = /saved at (\S+);/.exec(shown)![1]!
        h.root.scriptedLlm.enqueue(toolCall('back', 'read', { path, offset: 238_000, limit: 2 }))
      } else h.root.scriptedLlm.enqueue({ text: 'read it' })
      return next()
    })
    const end = await h.run('make a lot of output')
    expect(end.error).toBeUndefined()
    expect(end.reason).toBe('completed')
    const real = readFileSync(join(h.workspace, 'real-output.txt'))
    expect(real.length).toBe(5 * 1024 * 1024)
    expect(path.startsWith(join(h.home, 'spill') + '/')).toBe(true)
    expect(sha256(readFileSync(path))).toBe(sha256(real))
    expect(statSync(path).mode & 0o777).toBe(0o600)
    const logged = textOf(h.toolResult('big').content)
    expect(Buffer.byteLength(logged)).toBeLessThan(10_000)
    expect(logged).toContain('5,242,880 bytes')
    expect(logged).toContain('output line 000000001')
    // The lines the note names are the file's, so the model can page to them.
    const [, lastShown] = /and [\d,]+–([\d,]+)\./.exec(logged)!
    expect(Number(lastShown!.replace(/,/g, ''))).toBe(real.toString().split('\n').length)
    expect(h.toolText('back')).toContain('output line 000238000')
  })
})

test('past the ceiling the spill holds the first bytes and the note says so', async () => {
  h = await bootComposition({
    patch: scriptedPatch({}, '- id: shell\n  config: { fullOutputCeilingBytes: 1000000 }\n'),
  })
  h.root.scriptedLlm.enqueue(toolCall('big', 'bash', { command: FIVE_MB }), { text: 'ok' })
  await h.run('make a lot of output')
  const real = readFileSync(join(h.workspace, 'real-output.txt'))
  const logged = textOf(h.toolResult('big').content)
  const path = /saved at (\S+);/.exec(logged)![1]!
  const saved = readFileSync(path)
  expect(saved.length).toBe(1_000_000)
  expect(saved.equals(real.subarray(0, 1_000_000))).toBe(true)
  expect(logged).toContain('its first 1000000 bytes (the ceiling; the rest was not kept)')
})

test('an output under the cap writes no spill file', async () => {
  h = await bootComposition({ patch: scriptedPatch({}) })
  h.root.scriptedLlm.enqueue(toolCall('small', 'bash', { command: 'echo hello' }), { text: 'ok' })
  await h.run('say hello')
  const session = (await h.agent()).session
  expect(h.toolText('small')).toBe('hello')
  expect(() => statSync(h.root.spillStore.fileFor(session.id, 'small')!)).toThrow(/ENOENT/)
})
