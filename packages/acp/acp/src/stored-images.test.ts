import { describe, expect, test } from 'vitest'
import type { SessionUpdate } from '@agentclientprotocol/sdk'
import { withStoredImages } from './stored-images.ts'
import { STORED_IMAGE } from './updates.ts'

const stored = (sha256: string): SessionUpdate => ({
  sessionUpdate: 'tool_call_update',
  toolCallId: 'c1',
  content: [
    { type: 'content', content: { type: 'text', text: 'before' } },
    {
      type: 'content',
      content: { type: 'image', mimeType: 'image/png', data: '', _meta: { [STORED_IMAGE]: { sha256 } } },
    },
  ],
})
const blocks = (update: SessionUpdate) =>
  update.sessionUpdate === 'tool_call_update'
    ? (update.content ?? []).map((item) => item.type === 'content' && item.content)
    : []

describe('stored images in tool call content', () => {
  test('a stored image is sent with its bytes, the rest unchanged and in order', async () => {
    const update = await withStoredImages(stored('a'.repeat(64)), async () => ({
      data: 'QUJD',
      mimeType: 'image/jpeg',
    }))
    expect(blocks(update)).toEqual([
      { type: 'text', text: 'before' },
      { type: 'image', mimeType: 'image/jpeg', data: 'QUJD' },
    ])
  })

  test('an image that cannot be read is said as text naming it and why, never sent empty', async () => {
    const update = await withStoredImages(stored('b'.repeat(64)), async () => {
      throw new Error('session s1 has no stored image')
    })
    expect(blocks(update)[1]).toEqual({
      type: 'text',
      text: '[image bbbbbbbbbbbb could not be read: session s1 has no stored image]',
    })
  })

  test('without an attachment store the image is named as not readable here', async () => {
    const update = await withStoredImages(stored('c'.repeat(64)), undefined)
    expect(blocks(update)[1]).toMatchObject({ type: 'text', text: expect.stringContaining('no attachment store') })
  })
})
