import { expect, test } from 'vitest'
import type { SessionEvent } from '@dsh/session'
import { oneLine, printable } from './text.ts'
import { transcriptLines } from './transcript.ts'

test('terminal text keeps words, newlines and tabs, drops escape sequences and shows other control characters', () => {
  expect(printable('a\tb\nc')).toBe('a\tb\nc')
  expect(printable('\x1b[31mred\x1b[0m \x1b]0;title\x07 \x1b]52;c;ZXZpbA==\x1b\\ done')).toBe('red   done')
  expect(printable('over\rwrite \x08 \x9b2J. \x1b')).toBe('over\\x0dwrite \\x08 . \\x1b')
  expect(oneLine('a\x1b[2Jb\nc', 10)).toBe('ab c')
})

test('sessions show prints a hostile tool name, answer and output as text only', () => {
  const at = (seq: number, type: string, data: unknown) => ({ seq, type, time: 0, data }) as unknown as SessionEvent
  const lines = transcriptLines(
    [
      at(1, 'tool/call', { callId: 'c', name: 'x\x1b]0;pwned\x07', arguments: { path: '\x1b[8mhidden' } }),
      at(2, 'tool/output', { callId: 'd', index: 0, text: 'printed\x1b[1A\x1b[2K' }),
      at(3, 'assistant/message', { content: [{ type: 'text', text: 'fine\x1b[2J\rOK' }] }),
    ],
    { previewChars: 200 },
  )
  for (const char of ['\x1b', '\x07', '\r']) expect(lines.join('\n')).not.toContain(char)
  expect(lines).toEqual(['    #1  tool       x hidden', '    #2  printed    printed', '    #3  assistant  fine OK'])
})
