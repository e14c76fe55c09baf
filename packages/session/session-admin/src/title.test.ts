import { afterEach, describe, expect, test } from 'vitest'
import type { LlmRequest } from '@dsh/llm'
import type {} from '@dsh/llm-scripted'
import { bootComposition, scriptedPatch, type Harness } from '@dsh/test-harness'
import type {} from './index.ts'
import { labelText, promptText, titleFromAnswer } from './title-text.ts'

let h: Harness | undefined
afterEach(async () => {
  await h?.dispose()
  h = undefined
})

const titleRequests = (harness: Harness) =>
  (harness.root.scriptedLlm.requests as LlmRequest[]).filter(
    (request) => request.origin && 'purpose' in request.origin && request.origin.purpose === 'title',
  )

/** Test compositions start with titles off (WITHOUT_AUTO_TITLE): the setting turns them on. */
const TITLES_ON = { 'settings.yaml': 'sessions.autoTitle: true\n' }

async function listed(harness: Harness, id: string) {
  return (await harness.root.sessions.list()).find((summary) => summary.id === id)
}

describe('the title after the first turn', () => {
  test('one auxiliary request, derived from the logged title/request, names the session; its usage is logged; later turns ask nothing', async () => {
    h = await bootComposition({ patch: scriptedPatch(), homeFiles: TITLES_ON })
    h.root.scriptedLlm.enqueue({ text: 'the answer' })
    h.root.scriptedLlm.enqueue({ text: '"Fixing the flaky build."\nsecond line', usage: { input: 40, output: 6 } })
    const result = await h.run('why does the build fail on CI? [referenced: /tmp/ci.log]')
    expect(result.reason).toBe('completed')

    const [sent, ...more] = titleRequests(h)
    expect(more).toHaveLength(0)
    const asked = h.events('title/request')[0]!.data
    expect(asked.prompt).toBe('why does the build fail on CI?')
    expect(sent).toMatchObject({
      route: asked.route,
      system: asked.system,
      tools: [],
      maxOutputTokens: asked.maxOutputTokens,
      messages: [{ role: 'user', content: [{ type: 'text', text: asked.prompt }] }],
    })
    expect(h.events('title/response').map((event) => event.data)).toEqual([
      {
        requestSeq: h.events('title/request')[0]!.seq,
        ok: true,
        title: 'Fixing the flaky build',
        usage: { input: 40, output: 6, cacheRead: 0, cacheWrite: 0 },
      },
    ])
    expect(h.events('session/title').map((event) => event.data)).toEqual([
      { title: 'Fixing the flaky build', source: 'model' },
    ])
    // Inside the turn, before turn/end: a one-shot run has its title when the process exits.
    expect(h.types().indexOf('session/title')).toBeLessThan(h.types().lastIndexOf('turn/end'))

    const agent = await h.agent()
    expect(await listed(h, agent.session.id)).toMatchObject({ title: 'Fixing the flaky build', titleSource: 'model' })

    h.root.scriptedLlm.enqueue({ text: 'second answer' })
    await h.run('and now?')
    expect(titleRequests(h)).toHaveLength(1)
    expect(h.events('title/request')).toHaveLength(1)
  })

  test('with sessions.autoTitle false no title request is made and the first prompt, mention markup removed, names the session', async () => {
    // The row's default is on; the setting turns it off.
    h = await bootComposition({
      patch: scriptedPatch({}, '- id: session-admin\n  config: { autoTitle: true }\n'),
      homeFiles: { 'settings.yaml': 'sessions.autoTitle: false\n' },
    })
    h.root.scriptedLlm.enqueue({ text: 'the answer' })
    await h.run('[referenced: /w/a.ts] explain <context source="/w/a.ts">\nconst secret = 1\n</context> this file')
    expect(titleRequests(h)).toHaveLength(0)
    expect(h.root.scriptedLlm.requests).toHaveLength(1)
    expect(h.events('title/request')).toHaveLength(0)
    const summary = await listed(h, (await h.agent()).session.id)
    expect(summary).toMatchObject({ firstPrompt: 'explain this file' })
    expect(summary?.title).toBeUndefined()
  })

  test('an llm/stream listener that slips the history into the title request is refused before it is sent; the turn still completes', async () => {
    h = await bootComposition({ patch: scriptedPatch(), homeFiles: TITLES_ON })
    h.root.scriptedLlm.enqueue({ text: 'the answer with a SECRET-TOKEN-42' })
    h.root.scriptedLlm.enqueue({ text: 'should never be asked' })
    h.root.on(
      'llm/stream',
      (request, next) => {
        if (request.origin && 'purpose' in request.origin && request.origin.purpose === 'title')
          request.messages.push({ role: 'assistant', content: [{ type: 'text', text: 'SECRET-TOKEN-42' }] })
        return next()
      },
      { prepend: true },
    )
    const result = await h.run('say the token')
    expect(result.reason).toBe('completed')
    expect(titleRequests(h)).toHaveLength(0)
    expect(h.root.scriptedLlm.requests).toHaveLength(1)
    const response = h.events('title/response')[0]!.data
    expect(response).toMatchObject({
      ok: false,
      reason: expect.stringContaining('title request: the request has 2 messages but the log derives 1'),
    })
    expect(h.events('session/title')).toHaveLength(0)
    expect((await listed(h, (await h.agent()).session.id))?.firstPrompt).toBe('say the token')
  })

  test('a failed title request is logged with why, and the first prompt stands in', async () => {
    h = await bootComposition({ patch: scriptedPatch(), homeFiles: TITLES_ON })
    h.root.scriptedLlm.enqueue({ text: 'the answer' })
    h.root.scriptedLlm.enqueue({ error: { code: 'SERVER', message: 'busy' } })
    expect((await h.run('first words')).reason).toBe('completed')
    expect(h.events('title/response')[0]!.data).toMatchObject({ ok: false, reason: expect.stringContaining('busy') })
    expect(h.events('session/title')).toHaveLength(0)
  })
})

describe('a user title wins', () => {
  test('a rename while the title request is on its way keeps the user title; the generated one is logged only as the response', async () => {
    h = await bootComposition({ patch: scriptedPatch(), homeFiles: TITLES_ON })
    h.root.scriptedLlm.enqueue({ text: 'the answer' })
    h.root.scriptedLlm.enqueue({ text: 'Generated name', delayMs: 200 })
    const agent = await h.agent()
    const stop = h.root.on('session/event', (_session, event) => {
      if (event.type === 'title/request') void h!.root.sessionAdmin.rename(agent.session.id, '  My   own name ')
    })
    await h.run('some prompt')
    stop()
    expect(h.events('session/title').map((event) => event.data)).toEqual([{ title: 'My own name', source: 'user' }])
    expect(h.events('title/response')[0]!.data).toMatchObject({ ok: true, title: 'Generated name' })
    expect(await listed(h, agent.session.id)).toMatchObject({ title: 'My own name', titleSource: 'user' })
  })

  test('a generated title logged after a user title does not replace it in the list', async () => {
    h = await bootComposition({ patch: scriptedPatch(), homeFiles: { 'settings.yaml': 'sessions.autoTitle: false\n' } })
    h.root.scriptedLlm.enqueue({ text: 'the answer' })
    await h.run('a prompt')
    const session = (await h.agent()).session
    session.append('session/title', { title: 'Chosen', source: 'user' })
    session.append('session/title', { title: 'Late generated', source: 'model' })
    expect(await listed(h, session.id)).toMatchObject({ title: 'Chosen', titleSource: 'user' })
  })
})

describe('title text', () => {
  test('mention markup is removed from a prompt and an answer is made one short line', () => {
    expect(
      promptText([
        { type: 'text', text: 'look at' },
        { type: 'text', text: '[referenced: src/a.ts (a.ts)]' },
        { type: 'text', text: '<context source="src/a.ts">\nx\n</context>' },
        { type: 'text', text: 'please' },
      ]),
    ).toBe('look at please')
    expect(titleFromAnswer('Title: "Refactor the parser."', 60)).toBe('Refactor the parser')
    expect(titleFromAnswer('\n\n', 60)).toBe('')
    // A hostile model's title cannot drive the terminal that `dsh sessions list` prints it to.
    expect(titleFromAnswer('\x1b]0;owned\x07Fix \x1b[31mthe\x1b[0m parser\x1b[2J\x07\x00', 60)).toBe('Fix the parser')
    expect(labelText('a\x1b[1Ab\u0085c\td')).toBe('abc d')
    expect(titleFromAnswer('a'.repeat(100), 10)).toBe(`${'a'.repeat(9)}…`)
  })
})

test('title events not of their schema are refused, naming the field', async () => {
  h = await bootComposition({ patch: scriptedPatch() })
  const session = await h.root.sessions.create({ cwd: h.workspace })
  expect(() => session.append('session/title', { title: '   ', source: 'user' })).toThrow(
    'data.title must be a title that is not blank',
  )
  expect(() => session.append('session/title', { title: 'x', source: 'someone' as never })).toThrow(
    'data.source must be one of user, model',
  )
  const request = { route: { provider: 'p', model: 'm' }, system: 's', prompt: 'q', maxOutputTokens: 0 }
  expect(() => session.append('title/request', request)).toThrow('data.maxOutputTokens must be a whole number ≥ 1')
  expect(() => session.append('title/response', { requestSeq: 1, ok: false, usage: { input: 1 } as never })).toThrow(
    'data.usage.output must be a number',
  )
  expect(session.events.filter((event) => event.type.includes('title'))).toEqual([])
})
