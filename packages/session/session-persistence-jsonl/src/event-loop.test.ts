import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { bootComposition, type Harness } from '@dsh/test-harness'
import { tempDir } from '@dsh/test-harness/world'
import { cwdKey } from '@dsh/session-persistence'

const LOG_BYTES = 50 * 1024 * 1024
const TICK_MS = 5
/**
 * Generous (2 shared cores): streamed, the longest gap measured 30-110 ms; the synchronous read and parse
 * it replaced held the loop 0.9-1.9 s on a log this size.
 */
const LONGEST_GAP_MS = 400

let h: Harness | undefined
afterEach(async () => {
  await h?.dispose()
  h = undefined
})

/** Writes a session log of about `bytes` straight to disk, as an earlier long session would have left it. */
function writeLargeLog(home: string, workspace: string, id: string, bytes: number): number {
  const dir = join(home, 'sessions', cwdKey(workspace), id)
  mkdirSync(dir, { recursive: true })
  const lines = [JSON.stringify({ format: 'dsh-session', version: 1, id, cwd: workspace, createdAt: 1 })]
  const text = 'x'.repeat(400)
  let size = 0
  let seq = 0
  while (size < bytes) {
    const line = JSON.stringify({ seq, time: 1000 + seq, type: 'assistant/message', data: { content: [{ type: 'text', text: `${seq} ${text}` }] } })
    lines.push(line)
    size += line.length + 1
    seq++
  }
  writeFileSync(join(dir, 'session.jsonl'), lines.join('\n') + '\n')
  return seq
}

/** Runs `work` while a timer ticks; returns its result and the longest gap seen between two ticks. */
async function longestGapDuring<T>(work: () => Promise<T>): Promise<{ result: T; gap: number }> {
  let last = performance.now()
  let gap = 0
  const timer = setInterval(() => {
    const now = performance.now()
    gap = Math.max(gap, now - last)
    last = now
  }, TICK_MS)
  try {
    const result = await work()
    return { result, gap: Math.max(gap, performance.now() - last) }
  } finally {
    clearInterval(timer)
  }
}

describe('opening a large log does not block the event loop', () => {
  test('read and list of a 50 MB log keep a timer ticking', async () => {
    const home = tempDir('dsh-big-home-')
    const workspace = tempDir('dsh-big-ws-')
    const id = 'big_session'
    const events = writeLargeLog(home, workspace, id, LOG_BYTES)
    h = await bootComposition({ home, workspace })
    const persistence = h.root.sessionPersistence

    const read = await longestGapDuring(() => persistence.read(id))
    expect(read.result.events).toHaveLength(events)
    expect(read.gap).toBeLessThan(LONGEST_GAP_MS)

    // No meta.json yet: listing folds the log from disk.
    const listed = await longestGapDuring(() => persistence.list())
    expect(listed.result.find((s) => s.id === id)?.events).toBe(events)
    expect(listed.gap).toBeLessThan(LONGEST_GAP_MS)
  }, 60_000)
})
