import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import { bootComposition, type Harness } from '@dsh/test-harness'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import type {} from '@dsh/llm-scripted'
import type {} from '@dsh/agent'
import type {} from './index.ts'

// A real 1×1 PNG: the attachments row checks what it stores.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=='

const SCRIPTED = `
- insert:
    - id: scripted
      name: '@dsh/llm-scripted'
      config: { models: [{ id: scripted-1 }, { id: scripted-2 }] }
`

let h: Harness | undefined
afterEach(async () => {
  await h?.dispose()
  h = undefined
})

const routes = () => h!.events('model/route').map((event) => event.data.route)

describe('the first route of a new session', () => {
  test('comes from settings.yaml and is the first event of the log', async () => {
    h = await bootComposition({
      patch: SCRIPTED,
      homeFiles: { 'settings.yaml': 'model.provider: scripted\nmodel.name: scripted-2\n' },
    })
    h.root.scriptedLlm.enqueue({ text: 'hi' })
    await h.run('hello')
    expect(h.types()[0]).toBe('model/route')
    expect(routes()).toEqual([{ provider: 'scripted', model: 'scripted-2' }])
    expect(h.root.scriptedLlm.requests[0]!.route).toEqual({ provider: 'scripted', model: 'scripted-2' })
  })

  test('defaults to the row config when settings.yaml says nothing', async () => {
    h = await bootComposition({
      patch: `${SCRIPTED}- id: model-routes\n  config: { provider: scripted, model: scripted-2 }\n`,
    })
    await h.agent()
    expect(routes()).toEqual([{ provider: 'scripted', model: 'scripted-2' }])
    expect(h.root.settings.list().find((entry) => entry.key === 'model.name')).toMatchObject({
      value: 'scripted-2',
      source: 'default',
    })
  })

  test('is left to the agents row when no setting names a route', async () => {
    h = await bootComposition({
      patch: `${SCRIPTED}- id: agents\n  config: { route: { provider: scripted, model: scripted-1 } }\n`,
    })
    h.root.scriptedLlm.enqueue({ text: 'hi' })
    expect(h.types()).toEqual([])
    await h.run('hello')
    expect(routes()).toEqual([{ provider: 'scripted', model: 'scripted-1' }])
  })

  test('is not guessed from half a route: a provider without a model name leaves the default', async () => {
    h = await bootComposition({
      patch: `${SCRIPTED}- id: agents\n  config: { route: { provider: scripted, model: scripted-1 } }\n`,
      homeFiles: { 'settings.yaml': 'model.provider: scripted\n' },
    })
    await h.agent()
    expect(routes()).toEqual([])
    expect(h.root.agents.defaultRoute()).toEqual({ provider: 'scripted', model: 'scripted-1' })
  })

  test('is followed by the route the caller asked for, which wins', async () => {
    h = await bootComposition({
      patch: SCRIPTED,
      homeFiles: { 'settings.yaml': 'model.provider: scripted\nmodel.name: scripted-2\n' },
    })
    const agent = await h.root.agents.create({ cwd: h.workspace, route: { provider: 'scripted', model: 'scripted-1' } })
    expect(h.root.agents.defaultRoute()).toEqual({ provider: 'scripted', model: 'scripted-2' })
    expect(agent.session.events.map((event) => event.type)).toEqual(['model/route'])
    expect(agent.route).toEqual({ provider: 'scripted', model: 'scripted-1' })
    await agent.dispose()
  })

  test('a switch mid-session is a logged event the next request uses', async () => {
    h = await bootComposition({
      patch: SCRIPTED,
      homeFiles: { 'settings.yaml': 'model.provider: scripted\nmodel.name: scripted-1\n' },
    })
    h.root.scriptedLlm.enqueue({ text: 'one' }, { text: 'two' })
    await h.run('first')
    ;(await h.agent()).setRoute({ provider: 'scripted', model: 'scripted-2' })
    await h.run('second')
    expect(routes()).toEqual([
      { provider: 'scripted', model: 'scripted-1' },
      { provider: 'scripted', model: 'scripted-2' },
    ])
    expect(h.root.scriptedLlm.requests.map((request) => request.route.model)).toEqual(['scripted-1', 'scripted-2'])
  })
})

describe('a request the route cannot honour is refused before any I/O', () => {
  let llm: MockServer
  beforeAll(async () => {
    llm = await startMockServer()
  })
  afterEach(() => llm.reset())
  afterAll(() => llm.close())

  async function bootOn(route: string, extra = '') {
    h = await bootComposition({
      patch: `
- id: agents
  config: { route: ${route} }
- id: llm-deepseek
  config: { baseUrl: '${llm.url}' }
- id: llm-openai
  config: { baseUrl: '${llm.url}/v1', models: [{ id: plain-model, contextWindow: 8192 }] }
- id: llm-retry
  config: { maxRetries: 0 }
${extra}`,
    })
    await h.root.credentials.set('DEEPSEEK_API_KEY', 'sk-routes-test-key-1')
    await h.root.credentials.set('OPENAI_API_KEY', 'sk-routes-test-key-2')
  }

  test('an effort the model does not support ends the turn UNSUPPORTED, naming effort and model', async () => {
    await bootOn('{ provider: openai, model: plain-model, effort: high }')
    const result = await h!.run('think hard')
    expect(result.reason).toBe('error')
    expect(result.error).toEqual({
      code: 'UNSUPPORTED',
      message: 'model openai/plain-model does not support reasoning effort "high" (supported: none)',
    })
    expect(h!.events('turn/end')[0]!.data.error?.code).toBe('UNSUPPORTED')
    expect(llm.requests).toHaveLength(0)
  })

  test('an image for a model that reads none ends the turn UNSUPPORTED, and the server receives nothing', async () => {
    await bootOn('{ provider: deepseek, model: deepseek-v4-flash }')
    const agent = await h!.agent()
    agent.followup([
      { type: 'text', text: 'what is this?' },
      { type: 'image', mediaType: 'image/png', data: PNG },
    ])
    const result = await agent.whenIdle()
    expect(result?.error?.code).toBe('UNSUPPORTED')
    expect(result?.error?.message).toMatch(
      /^model deepseek\/deepseek-v4-flash does not read images: an image without a description cannot be sent to it/,
    )
    expect(llm.requests).toHaveLength(0)
  })

  test('an image with a description reaches a text-only model as that description', async () => {
    await bootOn('{ provider: deepseek, model: deepseek-v4-flash }')
    llm.enqueue({ text: 'a cat' })
    const agent = await h!.agent()
    agent.followup([
      { type: 'text', text: 'what is this?' },
      { type: 'image', mediaType: 'image/png', data: PNG, description: 'a photo of a cat' },
    ])
    expect((await agent.whenIdle())?.reason).toBe('completed')
    const sent = llm.requests[0]!.body.messages.at(-1)
    expect(sent.role).toBe('user')
    expect(sent.content).toMatch(/^what is this\?\n\n.*a photo of a cat/s)
  })

  test('a provider no adapter serves, set by a later listener, is refused', async () => {
    await bootOn('{ provider: deepseek, model: deepseek-v4-flash }')
    h!.root.on('agent/request', async (draft, next) => {
      draft.request.route = { provider: 'nobody', model: 'nothing' }
      return next()
    })
    const result = await h!.run('go')
    expect(result.error?.code).toBe('UNKNOWN_PROVIDER')
    expect(result.error?.message).toMatch(
      /^the route nobody\/nothing names provider "nobody", which no mounted adapter serves \(mounted: .*deepseek/,
    )
    expect(llm.requests).toHaveLength(0)
  })
})
