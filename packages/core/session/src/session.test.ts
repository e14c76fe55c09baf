import { readFileSync, writeFileSync } from 'node:fs'
import { afterEach, describe, expect, test, vi } from 'vitest'
import { bootComposition, type Harness } from '@dsh/test-harness'
import { deriveMessages } from './derive.ts'
import { deriveTurnRequest } from './request.ts'
import type { SessionEvent } from './events.ts'
import { SessionError } from './storage.ts'

let h: Harness
afterEach(async () => h?.dispose())

const text = (value: string) => [{ type: 'text' as const, text: value }]

async function newSession() {
  h = await bootComposition()
  return h.root.sessions.create({ cwd: h.workspace })
}

function refusal(fn: () => unknown): SessionError {
  try {
    fn()
  } catch (error) {
    if (error instanceof SessionError) return error
    throw error
  }
  throw new Error('expected a SessionError')
}

describe('the log', () => {
  test('seq equals index, data is copied and frozen, listeners hear of committed events only', async () => {
    const session = await newSession()
    const heard: [number, number][] = []
    h.root.on('session/event', (s, event) => heard.push([event.seq, s.length]))
    const data = { content: text('hi'), source: 'user' as const }
    session.append('user/message', data)
    session.append('turn/start', { turnId: 't' })
    data.content[0]!.text = 'changed later'
    expect(session.events.map((event) => event.seq)).toEqual([0, 1])
    expect((session.events[0]!.data as any).content[0].text).toBe('hi')
    expect(Object.isFrozen((session.events[0]!.data as any).content[0])).toBe(true)
    expect(heard).toEqual([
      [0, 1],
      [1, 2],
    ])
  })

  test.each([
    ['undefined', { turnId: undefined }, 'data.turnId is undefined'],
    ['NaN', { turnId: 't', n: Number.NaN }, 'data.n is NaN (not a finite number)'],
    [
      'a class instance',
      { turnId: 't', when: new Date(0) },
      'data.when is a Date instance (only plain objects and arrays)',
    ],
    ['a function', { turnId: 't', f: () => 1 }, 'data.f is a function'],
  ])('rejects %s at append and appends nothing', async (_what, data, problem) => {
    const session = await newSession()
    const error = refusal(() => session.append('turn/start', data as any))
    expect(error.code).toBe('INVALID_EVENT')
    expect(error.message).toContain(problem)
    expect(session.length).toBe(0)
  })

  test('rejects a cycle and an unknown kind', async () => {
    const session = await newSession()
    const cyclic: any = { turnId: 't' }
    cyclic.self = cyclic
    expect(refusal(() => session.append('turn/start', cyclic)).message).toContain('data.self is a cycle')
    expect(refusal(() => session.append('made/up' as any, {} as any)).message).toContain('unknown event kind "made/up"')
  })
  // docs/performance.md (Long sessions): last(), all() and openTurn() are kept per kind as events arrive
  // instead of scanning the log on every step; they must still say what a scan of the log says.
  test('last(), all() and openTurn() agree with a scan of the log, on a new and on a resumed session', async () => {
    const session = await newSession()
    const scan = (events: readonly SessionEvent[]) => {
      let open: string | undefined
      for (const event of events as readonly any[]) {
        if (event.type === 'turn/start') open = event.data.turnId
        else if (event.type === 'turn/end') open = undefined
      }
      const starts = events.filter((event) => event.type === 'turn/start')
      return { open, starts: starts.map((event) => event.seq), last: starts.at(-1)?.seq }
    }
    const agree = (s: typeof session) => {
      const expected = scan(s.events)
      expect(s.openTurn()).toBe(expected.open)
      expect(s.all('turn/start').map((event) => event.seq)).toEqual(expected.starts)
      expect(s.last('turn/start')?.seq).toBe(expected.last)
    }
    agree(session)
    session.append('turn/start', { turnId: 't1' })
    agree(session)
    session.append('user/message', { content: text('hi'), source: 'user' })
    session.append('turn/end', { turnId: 't1', reason: 'completed' })
    agree(session)
    session.append('turn/start', { turnId: 't2' })
    agree(session)
    expect(session.openTurn()).toBe('t2')
    // all() hands out a new array each time: a caller changing it changes nothing in the session.
    session.all('turn/start').pop()
    expect(session.all('turn/start')).toHaveLength(2)
    session.append('turn/end', { turnId: 't2', reason: 'completed' })
    await h.root.sessions.close(session.id)
    const resumed = await h.root.sessions.resume(session.id)
    agree(resumed)
    expect(resumed.openTurn()).toBeUndefined()
    expect(resumed.all('turn/start').map((event) => event.data.turnId)).toEqual(['t1', 't2'])
    resumed.append('turn/start', { turnId: 't3' })
    agree(resumed)
    expect(resumed.last('turn/start')?.data.turnId).toBe('t3')
  })
})

describe('deriveMessages', () => {
  const event = (seq: number, type: string, data: any): SessionEvent => ({ seq, type, time: 0, data }) as any

  test('folds surface events and lets a summary replace a range', () => {
    const events = [
      event(0, 'user/message', { content: text('one'), source: 'user' }),
      event(1, 'assistant/message', {
        content: [{ type: 'tool-call', callId: 'c', name: 'echo', arguments: {} }],
        usage: {},
        finish: 'tool-calls',
      }),
      event(2, 'tool/call', { callId: 'c', name: 'echo', arguments: {} }),
      event(3, 'tool/result', { callId: 'c', content: text('r'), error: { code: 'X', message: 'm' } }),
      event(4, 'assistant/message', { content: [], usage: {}, finish: 'aborted', interrupted: true }),
      event(5, 'user/message', { content: text('two'), source: 'user' }),
      event(6, 'user/message', {
        content: text('summary of 0..3'),
        source: 'summary',
        replaces: { fromSeq: 0, toSeq: 3 },
      }),
    ]
    expect(deriveMessages(events.slice(0, 6))).toEqual([
      { role: 'user', content: text('one') },
      { role: 'assistant', content: [{ type: 'tool-call', callId: 'c', name: 'echo', arguments: {} }] },
      { role: 'tool', content: [{ type: 'tool-result', callId: 'c', content: text('r'), isError: true }] },
      { role: 'user', content: text('two') },
    ])
    expect(deriveMessages(events)).toEqual([
      { role: 'user', content: text('summary of 0..3') },
      { role: 'user', content: text('two') },
    ])
  })

  test('tool/pruned shows one logged tool result shorter and leaves everything else alone', () => {
    const events = [
      event(0, 'assistant/message', {
        content: [{ type: 'tool-call', callId: 'c', name: 'read', arguments: {} }],
        usage: {},
        finish: 'tool-calls',
      }),
      event(1, 'tool/result', { callId: 'c', content: text('x'.repeat(1000)) }),
      event(2, 'user/message', { content: text('next'), source: 'user' }),
      event(3, 'tool/pruned', { seq: 1, content: text('xx[… 996 characters cut …]xx') }),
      event(4, 'tool/pruned', { seq: 2, content: text('not a tool result: ignored') }),
    ]
    expect(deriveMessages(events)).toEqual([
      { role: 'assistant', content: [{ type: 'tool-call', callId: 'c', name: 'read', arguments: {} }] },
      { role: 'tool', content: [{ type: 'tool-result', callId: 'c', content: text('xx[… 996 characters cut …]xx') }] },
      { role: 'user', content: text('next') },
    ])
  })

  test('the cached fold equals a fresh fold after every append', async () => {
    const session = await newSession()
    for (let i = 0; i < 20; i++) {
      session.append(
        i % 2 ? 'user/message' : 'turn/start',
        (i % 2 ? { content: text(`m${i}`), source: 'user' } : { turnId: `${i}` }) as any,
      )
      expect(session.messages()).toEqual(deriveMessages(session.events))
    }
  })
})

describe('stored sessions', () => {
  test('a log with an unknown kind is refused on load unless the kind was marked ignorable', async () => {
    const session = await newSession()
    session.append('turn/start', { turnId: 't' })
    session.append('turn/end', { turnId: 't', reason: 'completed' })
    await h.root.sessions.close(session.id)
    const dir = (await import('node:fs')).readdirSync(`${h.home}/sessions`)[0]
    const file = `${h.home}/sessions/${dir}/${session.id}/session.jsonl`
    const original = readFileSync(file, 'utf8')
    writeFileSync(file, original + JSON.stringify({ type: 'plugin/gone', seq: 2, time: 1, data: {} }) + '\n')
    await expect(h.root.sessions.resume(session.id)).rejects.toThrow(
      'event 2 has kind "plugin/gone", which no mounted plugin defines (and it is not marked ignorable)',
    )
    writeFileSync(
      file,
      original + JSON.stringify({ type: 'plugin/gone', seq: 2, time: 1, data: {}, ignorable: true }) + '\n',
    )
    const resumed = await h.root.sessions.resume(session.id)
    expect(resumed.events.map((event) => event.type)).toEqual(['turn/start', 'turn/end', 'plugin/gone'])
  })

  // Issue #28.3: the "already open?" check came before an await, so the second caller met its own lease.
  test('two resumes of one stored session at once both get the one open session, with no SESSION_LOCKED', async () => {
    const session = await newSession()
    session.append('turn/start', { turnId: 't' })
    session.append('turn/end', { turnId: 't', reason: 'completed' })
    await h.root.sessions.close(session.id)
    const [first, second, third] = await Promise.all([
      h.root.sessions.resume(session.id),
      h.root.sessions.resume(session.id),
      h.root.sessions.resume(session.id),
    ])
    expect(second).toBe(first)
    expect(third).toBe(first)
    expect(h.root.sessions.get(session.id)).toBe(first)
    expect(first.events.map((event) => event.type)).toEqual(['turn/start', 'turn/end'])
    // A failed open is not kept: the next resume tries again.
    await h.root.sessions.close(session.id)
    await expect(
      Promise.all([h.root.sessions.resume('no-such-session'), h.root.sessions.resume('no-such-session')]),
    ).rejects.toThrow()
    expect(await h.root.sessions.resume(session.id)).not.toBe(first)
  })

  test('fork copies a prefix ending at a turn boundary and records its parent', async () => {
    const session = await newSession()
    session.append('turn/start', { turnId: 'a' })
    session.append('user/message', { content: text('first'), source: 'user' })
    session.append('turn/end', { turnId: 'a', reason: 'completed' })
    session.append('turn/start', { turnId: 'b' })
    session.append('user/message', { content: text('second'), source: 'user' })
    await session.flush()
    await expect(h.root.sessions.fork(session.id, 4)).rejects.toThrow(
      `cannot fork ${session.id} at seq 4: a turn is open there; fork at a turn boundary`,
    )
    await expect(h.root.sessions.fork(session.id, 9)).rejects.toThrow('the log has events 0..4')
    const fork = await h.root.sessions.fork(session.id, 2)
    expect(fork.header.parent).toEqual({ id: session.id, atSeq: 2 })
    expect(fork.messages()).toEqual([{ role: 'user', content: text('first') }])
    await h.root.sessions.close(fork.id)
    const stored = await h.root.sessions.read(fork.id)
    expect(stored.events.map((event) => event.type)).toEqual(['turn/start', 'user/message', 'turn/end'])
  })
})

describe('validation on load', () => {
  /** A stored session of one finished turn, with `line` appended raw to its JSONL file. */
  async function storedWith(line: unknown) {
    const session = await newSession()
    session.append('turn/start', { turnId: 't' })
    session.append('turn/end', { turnId: 't', reason: 'completed' })
    await h.root.sessions.close(session.id)
    const dir = (await import('node:fs')).readdirSync(`${h.home}/sessions`)[0]
    const file = `${h.home}/sessions/${dir}/${session.id}/session.jsonl`
    writeFileSync(file, readFileSync(file, 'utf8') + JSON.stringify(line) + '\n')
    return { id: session.id, file }
  }

  test('a stored tool/result the fold could not read fails to open, named by file, line, seq and field', async () => {
    const { id, file } = await storedWith({
      type: 'tool/result',
      seq: 2,
      time: 1,
      data: { callId: 'c', content: 'not blocks' },
    })
    const expected = `${file}:4: session ${id}: event 2 (seq 2, tool/result): data.content must be an array`
    await expect(h.root.sessions.resume(id)).rejects.toThrow(expected)
    await expect(h.root.sessions.read(id)).rejects.toThrow(expected)
    // The lease was released: the refusal is about the log, not a lock.
    await expect(h.root.sessions.resume(id)).rejects.toThrow(expected)
  })

  test.each([
    [
      'an assistant block of no known type',
      {
        type: 'assistant/message',
        seq: 2,
        time: 1,
        data: { content: [{ type: 'html', text: '<b>' }], usage: {}, finish: 'stop' },
      },
      'data.content[0].type must be one of text, reasoning, tool-call',
    ],
    [
      'a user message whose text is a number',
      { type: 'user/message', seq: 2, time: 1, data: { content: [{ type: 'text', text: 7 }], source: 'user' } },
      'data.content[0].text must be a string',
    ],
    [
      'a turn/end with an invented reason',
      { type: 'turn/end', seq: 2, time: 1, data: { turnId: 't', reason: 'whatever' } },
      'data.reason must be one of completed',
    ],
    [
      'a header with an unknown sampling field',
      { type: 'request/header', seq: 2, time: 1, data: { system: '', tools: [], sampling: { topP: 1 } } },
      'data.sampling.topP is not a sampling field',
    ],
    ['an event that is not plain JSON data', { type: 'turn/start', seq: 2, time: 1 }, 'data is undefined'],
    ['an event with no time', { type: 'turn/start', seq: 2, data: { turnId: 'x' } }, 'time must be a number'],
    // Issue #28.6: the type said every answer carries its usage and a model error code, the hand-written check
    // let a log without them pass (and the token meter then read `undefined.input`). One schema says both now.
    [
      'an answer without its usage',
      { type: 'assistant/message', seq: 2, time: 1, data: { content: [], finish: 'stop' } },
      'data.usage must be an object',
    ],
    [
      'an answer whose usage lacks a count',
      { type: 'assistant/message', seq: 2, time: 1, data: { content: [], usage: { input: 1 }, finish: 'stop' } },
      'data.usage.output must be a number',
    ],
    [
      'an answer failing with a code no model error has',
      {
        type: 'assistant/message',
        seq: 2,
        time: 1,
        data: {
          content: [],
          usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
          finish: 'error',
          error: { code: 'MADE_UP', message: 'x' },
        },
      },
      'data.error.code must be one of AUTH, QUOTA',
    ],
    [
      'an image with neither bytes nor a reference',
      {
        type: 'user/message',
        seq: 2,
        time: 1,
        data: { content: [{ type: 'image', mediaType: 'image/png' }], source: 'user' },
      },
      'data.content[0] must carry data or sha256',
    ],
    [
      'a step numbered 1.5',
      { type: 'step/start', seq: 2, time: 1, data: { turnId: 't', step: 1.5 } },
      'data.step must be a whole number ≥ 0',
    ],
    [
      'runtime facts that are not all text',
      { type: 'runtime/context', seq: 2, time: 1, data: { text: 'x', facts: { os: 'linux', cores: 2 } } },
      'data.facts.cores must be a string',
    ],
  ])('%s is refused on load', async (_name, line, problem) => {
    const { id, file } = await storedWith(line)
    await expect(h.root.sessions.resume(id)).rejects.toThrow(`${file}:4: session ${id}: event 2`)
    await expect(h.root.sessions.resume(id)).rejects.toThrow(problem)
  })

  test('a stored sandbox/mode no policy knows is refused, not obeyed', async () => {
    const { id } = await storedWith({ type: 'sandbox/mode', seq: 2, time: 1, data: { mode: 'yolo' } })
    await expect(h.root.sessions.resume(id)).rejects.toThrow(
      'event 2 (seq 2, sandbox/mode): data.mode must be one of read-only, workspace-write, danger-full-access',
    )
  })

  test('a damaged session is listed as damaged with the reason, an intact one is not', async () => {
    const { id } = await storedWith({
      type: 'tool/result',
      seq: 2,
      time: 1,
      data: { callId: 'c', content: 'not blocks' },
    })
    const intact = await h.root.sessions.create({ cwd: h.workspace })
    await h.root.sessions.close(intact.id)
    const listed = await h.root.sessions.list()
    expect(listed.find((summary) => summary.id === id)?.damaged).toContain('data.content must be an array')
    expect(listed.find((summary) => summary.id === intact.id)?.damaged).toBeUndefined()
  })

  test('a later process lists the damage it recorded without reading the log; a changed log, or a kind it holds defined now, is checked again', async () => {
    const { id, file } = await storedWith({ type: 'test/listing-kind', seq: 2, time: 1, data: {} })
    const first = h
    const damagedIn = async (list: Promise<{ id: string; damaged?: string }[]>) =>
      (await list).find((summary) => summary.id === id)?.damaged
    const unknown = 'has kind "test/listing-kind", which no mounted plugin defines'
    expect(await damagedIn(first.root.sessions.list())).toContain(unknown)

    const later = await bootComposition({ home: first.home, workspace: first.workspace })
    try {
      const read = vi.spyOn(later.root.sessionPersistence, 'read')
      expect(await damagedIn(later.root.sessions.list())).toContain(`${file}:4: session ${id}: event 2 ${unknown}`)
      // A kind the log does not hold (another profile's plugins) changes nothing about this log's verdict.
      later.root.sessions.defineKind(later.root, 'test/another-profile-kind')
      expect(await damagedIn(later.root.sessions.list())).toContain(unknown)
      expect(read).not.toHaveBeenCalled()

      // The kind it holds is defined now: read again, and it opens.
      later.root.sessions.defineKind(later.root, 'test/listing-kind')
      expect(await damagedIn(later.root.sessions.list())).toBeUndefined()
      expect(read).toHaveBeenCalledTimes(1)

      // A bad line written behind dsh's back (meta.json now describes another log): read again, damaged.
      writeFileSync(
        file,
        readFileSync(file, 'utf8') +
          JSON.stringify({ type: 'tool/result', seq: 3, time: 2, data: { callId: 'c', content: 'not blocks' } }) +
          '\n',
      )
      expect(await damagedIn(later.root.sessions.list())).toContain('data.content must be an array')
      expect(read).toHaveBeenCalledTimes(2)
    } finally {
      await later.dispose()
    }
  })
})

describe('deriveTurnRequest', () => {
  const event = (seq: number, type: string, data: any): SessionEvent => ({ seq, type, time: 0, data }) as any
  const tools = [{ name: 'echo', description: 'Echo.', parameters: { type: 'object' } }]

  test('is the last header (with its sampling), the last context (with its effort) and the fold', () => {
    const events = [
      event(0, 'request/header', { system: 'old', tools: [] }),
      event(1, 'user/message', { content: text('hi'), source: 'user' }),
      event(2, 'request/header', { system: 'be brief', tools, sampling: { temperature: 0.2, maxOutputTokens: 100 } }),
      event(3, 'request/context', { provider: 'p', model: 'm', contextWindow: 1000, effort: 'high' }),
    ]
    expect(deriveTurnRequest(events)).toEqual({
      route: { provider: 'p', model: 'm', effort: 'high' },
      system: 'be brief',
      tools,
      messages: [{ role: 'user', content: text('hi') }],
      temperature: 0.2,
      maxOutputTokens: 100,
    })
  })

  test('names what is missing', () => {
    expect(deriveTurnRequest([])).toBe('no request/header event precedes the request')
    expect(deriveTurnRequest([event(0, 'request/header', { system: '', tools: [] })])).toBe(
      'no request/context event precedes the request',
    )
  })
})
