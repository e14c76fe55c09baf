import { readFileSync, readdirSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { bootComposition, type Harness } from '@dsh/test-harness'
import type {} from '@dsh/spill'

let h: Harness
afterEach(async () => h?.dispose())

describe('the local spill store', () => {
  test('writes the text under $DSH_HOME/spill/<session>/<call>.txt, readable by its owner only', async () => {
    h = await bootComposition()
    const spilled = await h.root.spillStore.write({
      sessionId: 's-1',
      callId: 'call_7',
      tool: 'bash',
      text: 'one\ntwo\nthree\n',
    })
    expect(spilled).toEqual({ path: join(h.home, 'spill', 's-1', 'call_7.txt'), bytes: 14, lines: 3 })
    expect(readFileSync(spilled.path, 'utf8')).toBe('one\ntwo\nthree\n')
    expect(statSync(spilled.path).mode & 0o777).toBe(0o600)
    expect(statSync(dirname(spilled.path)).mode & 0o777).toBe(0o700)
  })

  test('ids from a provider never lead outside the store', async () => {
    h = await bootComposition()
    const spilled = await h.root.spillStore.write({
      sessionId: '../../etc',
      callId: '../passwd',
      tool: 'x',
      text: 'data',
    })
    expect(spilled.path.startsWith(join(h.home, 'spill') + '/')).toBe(true)
    expect(readdirSync(join(h.home, 'spill'))).toEqual(['__.._etc'])
    expect(readdirSync(join(h.home, 'spill', '__.._etc'))).toEqual(['__passwd.txt'])
  })

  test('a rewritten call keeps mode 0600 and the new text', async () => {
    h = await bootComposition()
    await h.root.spillStore.write({ sessionId: 's', callId: 'c', tool: 'x', text: 'old' })
    const again = await h.root.spillStore.write({ sessionId: 's', callId: 'c', tool: 'x', text: 'new text' })
    expect(readFileSync(again.path, 'utf8')).toBe('new text')
    expect(statSync(again.path).mode & 0o777).toBe(0o600)
  })

  test('a missing id is refused with a typed error', async () => {
    h = await bootComposition()
    await expect(h.root.spillStore.write({ sessionId: '', callId: 'c', tool: 'x', text: 't' })).rejects.toMatchObject({
      code: 'SPILL_INVALID',
    })
  })
})
