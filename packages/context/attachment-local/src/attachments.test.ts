import { existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import type { ImageBlock, LlmRequest } from '@dsh/llm'
import { cwdKey } from '@dsh/session-persistence'
import { pngOfColour, tempDir } from '@dsh/test-harness/world'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'

const png = pngOfColour

const PICTURE = png(3, 2, [200, 30, 30])
const DATA = PICTURE.toString('base64')
const SHA = (await import('node:crypto')).createHash('sha256').update(PICTURE).digest('hex')

const MODELS =
  '{ models: [{ id: vision, contextWindow: 100000, images: true }, { id: text, contextWindow: 100000, images: false }] }'
const patch = (attachments = '{}') =>
  scriptedPatch({ config: MODELS, model: 'vision' }, `- id: attachments\n  config: ${attachments}\n`)

let h: Harness | undefined
afterEach(async () => {
  await h?.dispose()
  h = undefined
})

function folders() {
  return { home: tempDir('dsh-att-home-'), workspace: tempDir('dsh-att-ws-') }
}

const imagesSent = (request: LlmRequest) =>
  request.messages.flatMap((message) =>
    message.role === 'user' ? message.content.filter((block): block is ImageBlock => block.type === 'image') : [],
  )
const textsSent = (request: LlmRequest) =>
  request.messages.flatMap((message) =>
    message.role === 'user' ? message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])) : [],
  )

describe('image attachments', () => {
  test('an image the user sends is stored once beside the session log and the log holds only its reference', async () => {
    const { home, workspace } = folders()
    h = await bootComposition({ home, workspace, patch: patch() })
    h.root.scriptedLlm.enqueue({ text: 'a red picture' }, { text: 'the same picture' })
    const agent = await h.agent()
    agent.followup([
      { type: 'text', text: 'what is this?' },
      { type: 'image', mediaType: 'image/png', data: DATA },
    ])
    await agent.whenIdle()
    agent.followup([{ type: 'image', mediaType: 'image/png', data: DATA, description: 'the red one again' }])
    await agent.whenIdle()
    const blocks = h.events('user/message').map((event) => event.data.content.find((block) => block.type === 'image'))
    expect(blocks).toEqual([
      { type: 'image', mediaType: 'image/png', sha256: SHA },
      { type: 'image', mediaType: 'image/png', sha256: SHA, description: 'the red one again' },
    ])
    const dir = join(home, 'sessions', cwdKey(workspace), agent.session.id)
    const file = join(dir, 'attachments', `${SHA}.png`)
    expect(readFileSync(file)).toEqual(PICTURE)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    await agent.session.flush()
    expect(readFileSync(join(dir, 'session.jsonl'), 'utf8')).not.toContain(DATA.slice(0, 40))
  })

  test('an image survives resume and is sent inline to an image route, but as text to a text-only route', async () => {
    const { home, workspace } = folders()
    h = await bootComposition({ home, workspace, patch: patch() })
    h.root.scriptedLlm.enqueue({ text: 'red' })
    const first = await h.agent()
    first.followup([
      { type: 'text', text: 'look' },
      { type: 'image', mediaType: 'image/png', data: DATA },
    ])
    await first.whenIdle()
    const sessionId = first.session.id
    expect(imagesSent(h.root.scriptedLlm.requests[0] as LlmRequest)).toEqual([
      { type: 'image', mediaType: 'image/png', data: DATA },
    ])
    await h.dispose()

    h = await bootComposition({ home, workspace, patch: patch() })
    h.root.scriptedLlm.enqueue({ text: 'still red' }, { text: 'I cannot see it' })
    const resumed = await h.root.agents.resume(sessionId)
    resumed.followup('and now?')
    await resumed.whenIdle()
    const [onImageRoute] = h.root.scriptedLlm.requests as LlmRequest[]
    expect(imagesSent(onImageRoute!)).toEqual([{ type: 'image', mediaType: 'image/png', data: DATA }])

    resumed.setRoute({ provider: 'scripted', model: 'text' })
    resumed.followup('describe it')
    await resumed.whenIdle()
    const onTextRoute = h.root.scriptedLlm.requests[1] as LlmRequest
    expect(imagesSent(onTextRoute)).toEqual([])
    expect(textsSent(onTextRoute)).toContain(
      '[Image (image/png, 3×2) left out: the model scripted/text does not accept images.]',
    )
    // The log still holds the reference, whatever the route saw.
    expect(resumed.session.all('user/message')[0]!.data.content[1]).toEqual({
      type: 'image',
      mediaType: 'image/png',
      sha256: SHA,
    })
  })

  test("a fork keeps its parent's images", async () => {
    const { home, workspace } = folders()
    h = await bootComposition({ home, workspace, patch: patch() })
    h.root.scriptedLlm.enqueue({ text: 'red' }, { text: 'forked and red' })
    const parent = await h.agent()
    parent.followup([{ type: 'image', mediaType: 'image/png', data: DATA }])
    await parent.whenIdle()
    await parent.session.flush()
    const child = await h.root.agents.fork(parent.session.id, parent.session.length - 1)
    child.followup('again')
    await child.whenIdle()
    expect(imagesSent(h.root.scriptedLlm.requests[1] as LlmRequest)).toEqual([
      { type: 'image', mediaType: 'image/png', data: DATA },
    ])
    expect(existsSync(join(home, 'sessions', cwdKey(workspace), child.session.id, 'attachments', `${SHA}.png`))).toBe(
      true,
    )
  })

  test('an image a tool returns is stored and referenced like one from the user', async () => {
    h = await bootComposition({ patch: patch() })
    h.root.tools.register(h.root, {
      name: 'snap',
      description: 'Takes a picture.',
      parameters: { type: 'object', properties: {} },
      execute: async () => ({
        content: [
          { type: 'text', text: 'snapped' },
          { type: 'image', mediaType: 'image/png', data: DATA },
        ],
      }),
    })
    h.root.scriptedLlm.enqueue(toolCall('s', 'snap', {}), { text: 'I see red' })
    await h.run('take a picture')
    expect(h.events('tool/result')[0]!.data.content).toEqual([
      { type: 'text', text: 'snapped' },
      { type: 'image', mediaType: 'image/png', sha256: SHA },
    ])
    const second = h.root.scriptedLlm.requests[1] as LlmRequest
    const tool = second.messages.find((message) => message.role === 'tool')!
    expect(tool.content[0]!.content[1]).toEqual({ type: 'image', mediaType: 'image/png', data: DATA })
  })

  test('the media type comes from the bytes, and data that is too large or not an image is refused with a note', async () => {
    h = await bootComposition({ patch: patch(`{ maxBytes: ${PICTURE.byteLength + 10} }`) })
    h.root.scriptedLlm.enqueue({ text: 'ok' })
    const agent = await h.agent()
    agent.followup([
      { type: 'image', mediaType: 'image/jpeg', data: DATA },
      { type: 'image', mediaType: 'image/png', data: png(40, 40, [0, 0, 255]).toString('base64') },
      { type: 'image', mediaType: 'image/png', data: Buffer.from('not an image at all').toString('base64') },
    ])
    await agent.whenIdle()
    const [normalized, large, junk] = h.events('user/message')[0]!.data.content
    expect(normalized).toEqual({ type: 'image', mediaType: 'image/png', sha256: SHA })
    expect(large).toMatchObject({
      type: 'text',
      text: expect.stringMatching(/^\[An image was not attached: the image is \d+ bytes; at most \d+ are accepted\]$/),
    })
    expect(junk).toMatchObject({ type: 'text', text: expect.stringContaining('not an image of a known type') })
  })
})
