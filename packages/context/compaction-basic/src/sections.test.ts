// Summaries that keep the task (issue #18 part 5): a real composition with real file tools; the scripted
// model answers the summary request with the sections it was asked for.
import { afterEach, expect, test } from 'vitest'
import type { LlmRequest } from '@dsh/llm'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'
import type { SummaryDraft } from '@dsh/compaction'
import type {} from '@dsh/commands'
import { lastText, respondWith, summaryKind } from './test-support/model.ts'
import { parseSections } from './sections.ts'

let h: Harness
afterEach(async () => h?.dispose())

const SUMMARY = `## Goal and constraints
Rename the config loader; keep the public API.
## Decisions
Use a wrapper instead of a rename.
## Done
Wrote notes.txt, read a.txt.
## Next
Run the tests.
## Open questions
none`

test('a summary asks for the task sections, stores them with the files the log shows touched and what a hook added, and the next request starts with it', async () => {
  h = await bootComposition({ patch: scriptedPatch({ fixtureTools: true }), workspaceFiles: { 'a.txt': 'alpha\n' } })
  const script = [
    toolCall('r', 'read', { path: 'a.txt' }),
    toolCall('w', 'write', { path: 'notes.txt', content: 'plan\n' }),
    { text: 'noted' },
  ]
  respondWith(h, (request) => (summaryKind(request) ? { text: SUMMARY } : (script.shift() ?? { text: 'continuing' })))
  // The documented place for PreCompact hooks: a waterfall that may add sections.
  h.root.on('compaction/summary', async (draft: SummaryDraft, next) => {
    draft.added.push({ title: 'From a hook', text: 'remember the release date', source: 'hook' })
    return next()
  })
  await h.run('rename the loader, keep the API')
  await h.root.commands.run(await h.agent(), '/compact')
  const requests = h.root.scriptedLlm.requests as LlmRequest[]
  const summaryRequest = requests.find((request) => summaryKind(request))!
  for (const title of ['## Goal and constraints', '## Decisions', '## Done', '## Next', '## Open questions'])
    expect(lastText(summaryRequest)).toContain(title)

  const [end] = h.events('compaction/end')
  expect(end!.data.sections!.map((section) => [section.title, section.source])).toEqual([
    ['Goal and constraints', 'model'],
    ['Decisions', 'model'],
    ['Done', 'model'],
    ['Next', 'model'],
    ['Open questions', 'model'],
    ['Files touched (from the log)', 'log'],
    ['From a hook', 'hook'],
  ])
  expect(end!.data.sections![5]!.text).toBe('changed: notes.txt\nread: a.txt')
  const summary = h.events('user/message').find((event) => event.data.source === 'summary')!
  const text = summary.data.content.map((block) => (block.type === 'text' ? block.text : '')).join('')
  expect(text).toContain(
    `${SUMMARY}\n\n## Files touched (from the log)\nchanged: notes.txt\nread: a.txt\n\n## From a hook\nremember the release date`,
  )

  h.root.scriptedLlm.enqueue({ text: 'resuming the task' })
  await h.run('go on')
  const next = (h.root.scriptedLlm.requests as LlmRequest[]).at(-1)!
  expect(next.messages[0]).toEqual({ role: 'user', content: summary.data.content })
})

test('a summary without the headings is one section, and text under an unknown heading stays with its section', () => {
  expect(parseSections('just prose')).toEqual([{ title: 'Summary', text: 'just prose', source: 'model' }])
  expect(parseSections('## Done\nthis\n### Details\nthat\n## next:\nthen')).toEqual([
    { title: 'Done', text: 'this\n### Details\nthat', source: 'model' },
    { title: 'Next', text: 'then', source: 'model' },
  ])
})
