// The examples/claude-compat folder (a Claude Code user's .claude/ skills and commands) used unchanged.
import { cpSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { afterEach, expect, test } from 'vitest'
import type { LlmRequest } from '@dsh/llm'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'

const EXAMPLE = fileURLToPath(new URL('../../../../examples/claude-compat', import.meta.url))

let h: Harness
afterEach(async () => h?.dispose())

test('the example skill is catalogued and loads with its reference file, and the example commands run with arguments', async () => {
  h = await bootComposition({ patch: scriptedPatch() })
  cpSync(EXAMPLE, h.workspace, { recursive: true })
  h.root.scriptedLlm.enqueue(
    toolCall('c1', 'skill', { name: 'changelog-writer' }),
    toolCall('c2', 'skill', { name: 'changelog-writer', file: 'references/style.md' }),
    { text: 'done' },
  )
  await h.run('write the changelog entry')
  const catalog = h.events('skill/catalog')[0]!.data
  expect(catalog.problems).toEqual([])
  expect(catalog.skills.map((skill) => skill.name)).toEqual(['changelog-writer'])
  const request = h.root.scriptedLlm.requests[0] as LlmRequest
  expect(JSON.stringify(request.messages)).toContain(
    '- changelog-writer: Writes a CHANGELOG.md entry for the changes since the last release tag',
  )
  expect(h.toolText('c1')).toContain('1. Run `scripts/collect.sh` (from this skill')
  expect(h.toolText('c1')).toContain(
    'Its allowed-tools (Read Grep Bash(git log:*) Bash(git describe:*)) are not permissions here',
  )
  expect(h.toolText('c2')).toContain('Sections, in this order')

  const agent = await h.agent()
  expect(await h.root.commands.run(agent, '/fix-issue 42 high')).toMatchObject({
    handled: true,
    prompt: expect.stringContaining(
      'Please analyze and fix GitHub issue #42 (priority: high).\n\n1. Read the issue with `gh issue view 42`.',
    ),
  })
  expect(await h.root.commands.run(agent, '/review')).toMatchObject({
    prompt: expect.stringMatching(/^Review the uncommitted changes/),
  })
  const listed = await h.root.commands.list(agent.cwd)
  expect(listed.find((command) => command.name === 'fix-issue')).toMatchObject({
    description: 'Find and fix a GitHub issue by its number',
    argumentHint: '<issue-number> [priority]',
  })
})
