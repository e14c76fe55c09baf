import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { tempDir } from '@dsh/test-harness/world'
import { loadAgentTypes, parseAgentFile } from './agent-types.ts'
import { Slots } from './slots.ts'
import { checkShape } from '@dsh/session'
import { SubagentEndData, SubagentParentData, SubagentStartData } from '@dsh/subagent'

test('an agent file gives its front matter and its body as instructions; `model: inherit` is the parent model', () => {
  const type = parseAgentFile(
    '---\nname: reviewer\ndescription: Reviews\ntools: [read, grep]\nmodel: inherit\nceiling: read-only\n---\n\nReview carefully.\n',
    'a.md',
  )
  expect(type).toEqual({
    name: 'reviewer',
    description: 'Reviews',
    tools: ['read', 'grep'],
    ceiling: 'read-only',
    instructions: 'Review carefully.',
    source: 'a.md',
  })
})

test('a malformed agent file fails naming the file and the field', () => {
  expect(() => parseAgentFile('no front matter', '/w/.dsh/agents/x.md')).toThrow(
    '/w/.dsh/agents/x.md: an agent file starts with YAML front matter',
  )
  expect(() => parseAgentFile('---\nname: two words\ndescription: d\n---\n', 'x.md')).toThrow(
    'x.md: name must be a word',
  )
  expect(() => parseAgentFile('---\nname: x\n---\n', 'x.md')).toThrow('x.md: description must be a non-empty string')
  expect(() => parseAgentFile('---\nname: x\ndescription: d\ntools: 3\n---\n', 'x.md')).toThrow(
    'x.md: tools must be a list',
  )
  expect(() => parseAgentFile('---\nname: x\ndescription: d\nceiling: root\n---\n', 'x.md')).toThrow(
    'x.md: ceiling must be one of read-only, workspace-write, danger-full-access',
  )
  expect(() => parseAgentFile('---\nname: [x\n---\n', 'x.md')).toThrow('x.md: front matter is not YAML')
})

test('types load built-ins first, then each folder in order, a later file replacing a name', async () => {
  const cwd = tempDir()
  mkdirSync(join(cwd, 'a'))
  mkdirSync(join(cwd, 'b'))
  writeFileSync(join(cwd, 'a', 'explore.md'), '---\nname: explore\ndescription: my explore\n---\n')
  writeFileSync(join(cwd, 'a', 'notes.txt'), 'not an agent')
  writeFileSync(join(cwd, 'b', 'explore.md'), '---\nname: explore\ndescription: dsh explore\n---\n')
  const types = await loadAgentTypes(cwd, ['a', 'b', 'missing'])
  expect(types.map((type) => [type.name, type.description.split(' ')[0]])).toEqual([
    ['general', 'A'],
    ['explore', 'dsh'],
  ])
})

test('slots run at most the limit at once, in arrival order, and a waiter whose signal aborts never runs', async () => {
  const slots = new Slots(() => 1)
  const order: string[] = []
  let release!: () => void
  const first = slots.run(
    new AbortController().signal,
    () => new Promise<void>((resolve) => (order.push('first'), (release = resolve))),
  )
  const aborted = new AbortController()
  const skipped = slots.run(aborted.signal, async () => void order.push('skipped'))
  const third = slots.run(new AbortController().signal, async () => void order.push('third'))
  aborted.abort(new Error('gone'))
  await expect(skipped).rejects.toThrow('gone')
  expect(order).toEqual(['first'])
  release()
  await Promise.all([first, third])
  expect(order).toEqual(['first', 'third'])
})

test('the subagent kinds are declared by their schemas: a bad field is named', () => {
  const parent = { parentSessionId: 'p', kind: 'spawn' as const, agentType: 'general', description: 'd', depth: 1 }
  expect(checkShape(SubagentParentData, parent, 'data')).toBeUndefined()
  expect(checkShape(SubagentParentData, { ...parent, depth: 0 }, 'data')).toBe('data.depth must be a whole number ≥ 1')
  expect(checkShape(SubagentParentData, { ...parent, tools: ['read', 3] }, 'data')).toBe(
    'data.tools[1] must be a string',
  )
  const start = { childSessionId: 'c', kind: 'fork', agentType: 'general', description: 'd', ceiling: 'root' }
  expect(checkShape(SubagentStartData, start, 'data')).toBe(
    'data.ceiling must be one of read-only, workspace-write, danger-full-access',
  )
  expect(
    checkShape(SubagentEndData, { childSessionId: 'c', status: 'failed', text: '', error: { code: 'X' } }, 'data'),
  ).toBe('data.error.message must be a string')
})
