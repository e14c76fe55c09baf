import { existsSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import type { LlmRequest } from '@dsh/llm'
import { bootComposition, scriptedPatch, type CompositionOptions, type Harness } from '@dsh/test-harness'
import { secretWorld } from '@dsh/test-harness/world'
import { expandTemplate, splitArguments } from './index.ts'

let h: Harness
afterEach(async () => h?.dispose())

const boot = async (options: CompositionOptions) => (h = await bootComposition({ patch: scriptedPatch(), ...options }))

describe('user commands from Markdown files', () => {
  test('a .claude/commands file runs with its arguments substituted and /help lists it with its hint and file', async () => {
    await boot({
      workspaceFiles: {
        '.claude/commands/fix-issue.md':
          '---\ndescription: Fix a GitHub issue\nargument-hint: <number> [priority]\n---\nFix issue #$1 with priority $2.\nContext: $ARGUMENTS\n',
      },
      homeFiles: { 'commands/standup.md': 'Summarize what changed since yesterday.\n' },
    })
    const agent = await h.agent()
    const outcome = await h.root.commands.run(agent, '/fix-issue 123 high')
    expect(outcome).toMatchObject({
      handled: true,
      name: 'fix-issue',
      prompt: 'Fix issue #123 with priority high.\nContext: 123 high',
    })
    const help = await h.root.commands.run(agent, '/help')
    expect(help).toMatchObject({
      output: expect.stringContaining(
        `/fix-issue <number> [priority] — Fix a GitHub issue (${join(h.workspace, '.claude/commands/fix-issue.md')})`,
      ),
    })
    expect((help as { output: string }).output).toContain('/standup — Summarize what changed since yesterday.')
    expect((await h.root.commands.list(agent.cwd)).map((command) => command.name)).toEqual(
      expect.arrayContaining(['fix-issue', 'standup', 'help', 'model', 'skills', 'compact']),
    )
  })

  test('a file is seen as soon as it is written; .dsh/commands wins over .claude/commands, and a built-in over both', async () => {
    await boot({
      workspaceFiles: {
        '.claude/commands/deploy.md': 'claude deploy',
        '.dsh/commands/deploy.md': 'dsh deploy',
        '.claude/commands/help.md': 'hijacked help',
      },
    })
    const agent = await h.agent()
    expect(await h.root.commands.run(agent, '/later')).toEqual({ handled: false, unknown: 'later' })
    writeFileSync(join(h.workspace, '.dsh/commands/later.md'), 'now here')
    expect(await h.root.commands.run(agent, '/later')).toMatchObject({ prompt: 'now here' })
    expect(await h.root.commands.run(agent, '/deploy prod')).toMatchObject({ prompt: 'dsh deploy\n\nARGUMENTS: prod' })
    expect(await h.root.commands.run(agent, '/help')).not.toMatchObject({ prompt: expect.anything() })
  })

  test('model in the front matter switches the route (logged) and an unmounted provider fails the command', async () => {
    await boot({
      workspaceFiles: {
        '.dsh/commands/quick.md': '---\nmodel: scripted/scripted-fast\n---\nBe quick.',
        '.dsh/commands/far.md': '---\nmodel: elsewhere/big\n---\nx',
      },
    })
    const agent = await h.agent()
    expect(await h.root.commands.run(agent, '/quick')).toMatchObject({ prompt: 'Be quick.' })
    expect(agent.route).toEqual({ provider: 'scripted', model: 'scripted-fast' })
    expect(await h.root.commands.run(agent, '/far')).toMatchObject({ error: { code: 'COMMAND_BAD_MODEL' } })
  })

  test('a command file linked to a secret is left out, a bad front matter is left out, and nothing in a file runs', async () => {
    const world = secretWorld()
    await boot({
      home: world.dshHome,
      workspaceFiles: {
        '.dsh/commands/bad.md': '---\ndescription: [1, 2]\n---\nx',
        '.dsh/commands/shell.md': 'Status: !`touch pwned`',
      },
    })
    symlinkSync(world.sshKey, join(h.workspace, '.dsh/commands/keys.md'))
    const agent = await h.agent()
    expect(await h.root.commands.run(agent, '/keys')).toEqual({ handled: false, unknown: 'keys' })
    expect(await h.root.commands.run(agent, '/bad')).toEqual({ handled: false, unknown: 'bad' })
    h.root.scriptedLlm.enqueue({ text: 'ok' })
    const outcome = await h.root.commands.run(agent, '/shell')
    expect(outcome).toMatchObject({ prompt: 'Status: !`touch pwned`' })
    agent.followup((outcome as { prompt: string }).prompt)
    await agent.whenIdle()
    expect((h.root.scriptedLlm.requests[0] as LlmRequest).messages.at(-1)).toEqual({
      role: 'user',
      content: [{ type: 'text', text: 'Status: !`touch pwned`' }],
    })
    expect(JSON.stringify(h.events())).not.toContain(world.secret)
    expect(existsSync(join(h.workspace, 'pwned'))).toBe(false)
  })
})

describe('templates', () => {
  test('quoted words stay one argument and missing ones become empty', () => {
    expect(splitArguments(`a "b c" 'd e' f`)).toEqual(['a', 'b c', 'd e', 'f'])
    expect(expandTemplate('[$1][$2][$3]', '"x y" z')).toBe('[x y][z][]')
    expect(expandTemplate('no placeholder', '')).toBe('no placeholder')
  })
})
