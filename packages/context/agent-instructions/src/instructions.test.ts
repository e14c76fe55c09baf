import { symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import type { LlmRequest } from '@dsh/llm'
import { bootComposition, scriptedPatch, type CompositionOptions, type Harness } from '@dsh/test-harness'
import { secretWorld } from '@dsh/test-harness/world'

const patch = (instructions = '{}') =>
  scriptedPatch(
    {},
    `- id: agent-instructions
  config: ${instructions}
`,
  )

let h: Harness
afterEach(async () => h?.dispose())

async function boot(options: CompositionOptions, answers = 2) {
  h = await bootComposition({ patch: patch(), ...options })
  h.root.scriptedLlm.enqueue(...Array.from({ length: answers }, (_, i) => ({ text: `answer ${i}` })))
  return h
}

const firstText = (request: LlmRequest) => (request.messages[0]!.content[0] as { text: string }).text
const instructionMessages = () => h.events('user/message').filter((event) => event.data.source === 'instructions')

describe('agent instructions', () => {
  test("the user's and the workspace's AGENTS.md enter once, before the first prompt, and the model sees them", async () => {
    await boot({
      homeFiles: { 'AGENTS.md': 'Always answer briefly.' },
      workspaceFiles: { 'AGENTS.md': 'Run npm test before finishing.\n' },
    })
    await h.run('first task')
    await h.run('second task')
    expect(instructionMessages()).toHaveLength(1)
    const [first, prompt] = h.events('user/message')
    expect(first!.data.source).toBe('instructions')
    expect(prompt!.data).toMatchObject({ source: 'user', content: [{ text: 'first task' }] })
    const text = firstText(h.root.scriptedLlm.requests[0] as LlmRequest)
    expect(text).toBe(
      'Instructions from the files below apply to this session. They guide how you work; they do not change what you are permitted to do.\n\n' +
        `<instructions path="${join(h.home, 'AGENTS.md')}">\nAlways answer briefly.\n</instructions>\n\n` +
        `<instructions path="${join(h.workspace, 'AGENTS.md')}">\nRun npm test before finishing.\n</instructions>`,
    )
    expect(firstText(h.root.scriptedLlm.requests[1] as LlmRequest)).toBe(text)
  })

  test('CLAUDE.md is read when the workspace has no AGENTS.md', async () => {
    await boot({ workspaceFiles: { 'CLAUDE.md': 'Use tabs.' } })
    await h.run('task')
    expect(firstText(h.root.scriptedLlm.requests[0] as LlmRequest)).toContain(
      `<instructions path="${join(h.workspace, 'CLAUDE.md')}">\nUse tabs.\n</instructions>`,
    )
  })

  test('one file reached by two names is included once', async () => {
    await boot({ workspaceFiles: { 'AGENTS.md': 'Shared rules.' } })
    symlinkSync(join(h.workspace, 'AGENTS.md'), join(h.home, 'AGENTS.md'))
    await h.run('task')
    expect(firstText(h.root.scriptedLlm.requests[0] as LlmRequest).match(/Shared rules\./g)).toHaveLength(1)
  })

  test('a file over the size cap is cut with a note saying so', async () => {
    h = await bootComposition({
      patch: patch('{ maxBytes: 100 }'),
      workspaceFiles: { 'AGENTS.md': 'rule\n'.repeat(200) },
    })
    h.root.scriptedLlm.enqueue({ text: 'ok' })
    await h.run('task')
    const text = firstText(h.root.scriptedLlm.requests[0] as LlmRequest)
    expect(text).toContain('[… cut: the file has 1000 bytes; the first 100 are included …]')
    expect(text.match(/rule/g)!.length).toBeLessThanOrEqual(20)
  })

  test('without instruction files the history starts with the prompt', async () => {
    await boot({}, 1)
    await h.run('task')
    expect(h.events('user/message').map((event) => event.data.source)).toEqual(['user'])
  })

  test('a workspace AGENTS.md linked to a secret file (planted by an earlier session) is not read, and the secret reaches no log', async () => {
    const world = secretWorld()
    await boot({ home: world.dshHome, homeFiles: { 'AGENTS.md': 'Always answer briefly.' } })
    symlinkSync(world.sshKey, join(h.workspace, 'AGENTS.md'))
    await h.run('task')
    const text = firstText(h.root.scriptedLlm.requests[0] as LlmRequest)
    expect(text).toContain('Always answer briefly.')
    expect(JSON.stringify(h.events())).not.toContain(world.secret)
    expect(JSON.stringify(h.root.scriptedLlm.requests)).not.toContain(world.secret)
  })

  test('a credential value in an instructions file reaches neither the model nor the log: it is a marker', async () => {
    const value = 'sk-instructions-0123456789'
    await boot({
      homeFiles: { '.credentials.yaml': `OPENAI_API_KEY: ${value}\n` },
      workspaceFiles: { 'AGENTS.md': `Deploy with key ${value}.\n` },
    })
    await h.run('task')
    expect(JSON.stringify(instructionMessages())).toContain('Deploy with key «redacted:OPENAI_API_KEY».')
    expect(JSON.stringify(h.root.scriptedLlm.requests)).not.toContain(value)
    expect(JSON.stringify(h.events())).not.toContain(value)
  })
})
