import { describe, expect, it } from 'vitest'
import { terminalText } from './terminal.ts'

describe('terminalText', () => {
  it('removes colours and cursor sequences, leaving no ESC byte', () => {
    const raw = '\x1b[01;34mdir\x1b[0m  \x1b[32mok.txt\x1b[m\n\x1b]0;title\x07\x1b[2Kdone\n'
    const text = terminalText(raw)
    expect(text).toBe('dir  ok.txt\ndone\n')
    expect(text).not.toContain('\x1b')
  })

  it('keeps the last state of a line redrawn with carriage returns', () => {
    expect(terminalText('start\n  0%\r 50%\r100%\nend')).toBe('start\n100%\nend')
    expect(terminalText('\x1b[2K 10%\r\x1b[2K\x1b[32m 99%\x1b[0m\r\x1b[2K\rfinished\n')).toBe('finished\n')
  })

  it('ignores a final carriage return that only moves the cursor', () => {
    expect(terminalText('working 100%\r\nnext')).toBe('working 100%\nnext')
    expect(terminalText('50%\r100%\r')).toBe('100%')
  })

  it('leaves plain text alone', () => {
    expect(terminalText('a\n\nb\tc\n')).toBe('a\n\nb\tc\n')
  })
})
