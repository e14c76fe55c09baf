import { existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import type { LlmRequest } from '@dsh/llm'
import { bootComposition, scriptedPatch, toolCall, type CompositionOptions, type Harness } from '@dsh/test-harness'
import { filesContaining, secretWorld } from '@dsh/test-harness/world'
import type {} from '@dsh/skill'

const skillFile = (name: string, description: string, body = `# ${name}\n\nDo the ${name} steps.`, extra = '') =>
  `---\nname: ${name}\ndescription: ${description}\n${extra}---\n${body}\n`

let h: Harness
afterEach(async () => h?.dispose())

async function boot(options: CompositionOptions) {
  h = await bootComposition({ patch: scriptedPatch(), ...options })
  return h
}

const texts = (request: LlmRequest) =>
  request.messages.flatMap((message) => message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])))
const requests = () => h.root.scriptedLlm.requests as LlmRequest[]

describe('skills catalog', () => {
  test('workspace and home skills are listed by name and description in a logged catalog the request carries', async () => {
    await boot({
      workspaceFiles: {
        '.claude/skills/release-notes/SKILL.md': skillFile('release-notes', 'Write release notes from the git log.'),
        '.agents/skills/lint-fix/SKILL.md': skillFile('lint-fix', 'Fix lint errors.'),
      },
      homeFiles: {
        'skills/house-style/SKILL.md': skillFile('house-style', 'The house writing style.', 'SECRET-BODY-TEXT'),
      },
    })
    h.root.scriptedLlm.enqueue({ text: 'ok' })
    expect((await h.run('hello')).reason).toBe('completed')
    const [catalog] = h.events('skill/catalog')
    expect(catalog!.data.skills.map((skill) => [skill.name, skill.scope])).toEqual([
      ['lint-fix', 'workspace'],
      ['release-notes', 'workspace'],
      ['house-style', 'home'],
    ])
    const seen = texts(requests()[0]!).join('\n')
    expect(seen).toContain('- release-notes: Write release notes from the git log.')
    expect(seen).toContain('- house-style: The house writing style.')
    expect(seen).not.toContain('SECRET-BODY-TEXT') // progressive disclosure: bodies stay on disk until loaded
    expect(seen).not.toContain(join(h.workspace, '.claude')) // name and description only
  })

  test('the skill tool loads the body of a catalogued skill, and a file inside its folder', async () => {
    await boot({
      workspaceFiles: {
        '.dsh/skills/release-notes/SKILL.md': skillFile(
          'release-notes',
          'Write release notes.',
          'Read references/format.md, then write NOTES.md.',
        ),
        '.dsh/skills/release-notes/references/format.md': 'Use a heading per version.',
      },
    })
    h.root.scriptedLlm.enqueue(
      toolCall('c1', 'skill', { name: 'release-notes' }),
      toolCall('c2', 'skill', { name: 'release-notes', file: 'references/format.md' }),
      { text: 'done' },
    )
    expect((await h.run('write the notes')).reason).toBe('completed')
    const dir = join(h.workspace, '.dsh/skills/release-notes')
    expect(h.toolText('c1')).toContain(
      `<skill name="release-notes" folder="${dir}">\nRead references/format.md, then write NOTES.md.\n</skill>`,
    )
    expect(h.toolText('c2')).toContain('Use a heading per version.')
  })

  test('a bad SKILL.md is a problem naming file and field, and only that skill is left out', async () => {
    await boot({
      workspaceFiles: {
        '.claude/skills/good/SKILL.md': skillFile('good', 'Works.'),
        '.claude/skills/Bad_Name/SKILL.md': skillFile('Bad_Name', 'Upper case.'),
        '.claude/skills/no-description/SKILL.md': '---\nname: no-description\n---\nbody\n',
        '.claude/skills/long/SKILL.md': skillFile('long', 'x'.repeat(1025)),
        '.claude/skills/broken-yaml/SKILL.md': '---\nname: broken-yaml\ndescription: [unclosed\n---\nbody\n',
        '.claude/skills/other-folder/SKILL.md': skillFile('not-the-folder', 'Mismatch.'),
        '.claude/skills/meta/SKILL.md': skillFile('meta', 'Bad metadata.', 'body', 'metadata:\n  version: 2\n'),
      },
    })
    h.root.scriptedLlm.enqueue({ text: 'ok' })
    await h.run('hi')
    const [catalog] = h.events('skill/catalog')
    expect(catalog!.data.skills.map((skill) => skill.name)).toEqual(['good'])
    const problems = Object.fromEntries(
      catalog!.data.problems.map((problem) => [problem.file.slice(h.workspace.length + 1), problem.field]),
    )
    expect(problems).toEqual({
      '.claude/skills/Bad_Name/SKILL.md': 'name',
      '.claude/skills/no-description/SKILL.md': 'description',
      '.claude/skills/long/SKILL.md': 'description',
      '.claude/skills/broken-yaml/SKILL.md': 'front matter',
      '.claude/skills/other-folder/SKILL.md': 'name',
      '.claude/skills/meta/SKILL.md': 'metadata',
    })
    expect(texts(requests()[0]!).join('\n')).not.toContain('Bad_Name')
  })

  test('a skill added, changed or removed on disk is seen at the next turn as a new catalog; no change logs nothing', async () => {
    await boot({ workspaceFiles: { '.dsh/skills/one/SKILL.md': skillFile('one', 'First.') } })
    h.root.scriptedLlm.enqueue({ text: 'a' }, { text: 'b' }, { text: 'c' }, { text: 'd' })
    await h.run('turn 1')
    await h.run('turn 2')
    expect(h.events('skill/catalog')).toHaveLength(1)
    writeFileSync(join(h.workspace, '.dsh/skills/one/SKILL.md'), skillFile('one', 'First, reworded.'))
    mkdirSync(join(h.workspace, '.dsh/skills/two'))
    writeFileSync(join(h.workspace, '.dsh/skills/two/SKILL.md'), skillFile('two', 'Second.'))
    await h.run('turn 3')
    const catalogs = h.events('skill/catalog')
    expect(catalogs).toHaveLength(2)
    const latest = texts(requests()[2]!).join('\n')
    expect(latest).toContain('The skills on disk changed.')
    expect(latest).toContain('- one: First, reworded.\n- two: Second.')
    rmSync(join(h.workspace, '.dsh/skills'), { recursive: true })
    await h.run('turn 4')
    expect(h.events('skill/catalog').at(-1)!.data).toMatchObject({
      skills: [],
      content: [{ text: 'No skills are available any more; do not call the skill tool.' }],
    })
  })

  test('a catalog a compaction summarized away is logged again at the next turn', async () => {
    h = await bootComposition({
      patch: scriptedPatch(
        { config: '{ models: [{ id: scripted-1, contextWindow: 128000 }] }' },
        '- id: compaction\n  config: { keepRecentRatio: 0 }\n',
      ),
      workspaceFiles: { '.dsh/skills/one/SKILL.md': skillFile('one', 'First.') },
    })
    h.root.scriptedLlm.enqueue({ text: 'first turn' }, { text: 'SUMMARY' }, { text: 'second turn' })
    await h.run('first')
    expect(await h.root.commands.run(await h.agent(), '/compact')).toMatchObject({ handled: true, name: 'compact' })
    await h.run('second')
    expect(h.events('skill/catalog')).toHaveLength(2)
    const last = requests().at(-1)!
    expect(texts(last).join('\n')).toContain('Skills you can load with the skill tool when a task matches one.')
    expect(texts(last).join('\n')).toContain('- one: First.')
    expect(texts(last).join('\n')).toContain('SUMMARY')
  })

  test('/skills lists the skills with their allowed-tools marked as no permission, and each file left out', async () => {
    await boot({
      workspaceFiles: {
        '.dsh/skills/deploy/SKILL.md': skillFile('deploy', 'Deploys.', 'x', 'allowed-tools: Bash(kubectl:*)\n'),
        '.dsh/skills/bad/SKILL.md': '---\nname: bad\n---\n',
      },
    })
    const outcome = await h.root.commands.run(await h.agent(), '/skills')
    expect(outcome).toMatchObject({ handled: true, name: 'skills' })
    const output = (outcome as { output: string }).output
    expect(output).toContain('deploy (workspace) — Deploys. [allowed-tools, not a permission: Bash(kubectl:*)]')
    expect(output).toContain(`left out: ${join(h.workspace, '.dsh/skills/bad/SKILL.md')}: description is required`)
  })

  test('without skills nothing is logged and the history is unchanged', async () => {
    await boot({})
    h.root.scriptedLlm.enqueue({ text: 'ok' })
    await h.run('hi')
    expect(h.events('skill/catalog')).toEqual([])
    expect(requests()[0]!.messages).toHaveLength(1)
  })
})

describe('skills from a hostile repository', () => {
  test('a name with path traversal is refused by the schema, and a file outside the skill folder is refused', async () => {
    await boot({
      workspaceFiles: {
        '.dsh/skills/notes/SKILL.md': skillFile('notes', 'Notes.'),
        'private.txt': 'PRIVATE-TEXT',
        '.dsh/skills/notes/leak': '',
      },
    })
    rmSync(join(h.workspace, '.dsh/skills/notes/leak'))
    symlinkSync(join(h.workspace, 'private.txt'), join(h.workspace, '.dsh/skills/notes/leak'))
    h.root.scriptedLlm.enqueue(
      toolCall('c1', 'skill', { name: '../../etc' }),
      toolCall('c2', 'skill', { name: 'notes', file: '../../../private.txt' }),
      toolCall('c3', 'skill', { name: 'notes', file: '/etc/passwd' }),
      toolCall('c4', 'skill', { name: 'notes', file: 'leak' }),
      toolCall('c5', 'skill', { name: 'elsewhere' }),
      { text: 'done' },
    )
    await h.run('go')
    expect(h.toolResult('c1').error?.code).toBe('INVALID_ARGS')
    for (const id of ['c2', 'c3', 'c4']) expect(h.toolResult(id).error?.code).toBe('SKILL_PATH_OUTSIDE')
    expect(h.toolResult('c5').error).toMatchObject({
      code: 'SKILL_NOT_FOUND',
      message: expect.stringContaining('available: notes'),
    })
    expect(JSON.stringify(h.events())).not.toContain('PRIVATE-TEXT')
  })

  test('a SKILL.md linked to a secret file is left out with a problem, and the secret reaches no log', async () => {
    const world = secretWorld()
    await boot({ home: world.dshHome, workspaceFiles: { '.claude/skills/ok/SKILL.md': skillFile('ok', 'Fine.') } })
    mkdirSync(join(h.workspace, '.claude/skills/keys'))
    symlinkSync(world.sshKey, join(h.workspace, '.claude/skills/keys/SKILL.md'))
    h.root.scriptedLlm.enqueue({ text: 'ok' })
    await h.run('hi')
    const [catalog] = h.events('skill/catalog')
    expect(catalog!.data.skills.map((skill) => skill.name)).toEqual(['ok'])
    expect(catalog!.data.problems).toEqual([
      expect.objectContaining({ file: join(h.workspace, '.claude/skills/keys/SKILL.md'), field: 'file' }),
    ])
    await h.root.agents.get((await h.agent()).id)!.session.flush()
    expect(filesContaining(world.dshHome, world.secret).filter((file) => !file.endsWith('.credentials.yaml'))).toEqual(
      [],
    )
  })

  test('a credential value in a skill description is redacted in the log and the request', async () => {
    const world = secretWorld()
    await boot({
      home: world.dshHome,
      workspaceFiles: { '.dsh/skills/leaky/SKILL.md': skillFile('leaky', `Uses the key ${world.secret} to deploy.`) },
    })
    h.root.scriptedLlm.enqueue({ text: 'ok' })
    await h.run('hi')
    expect(h.events('skill/catalog')[0]!.data.skills[0]!.description).toContain('«redacted:')
    expect(JSON.stringify(h.events())).not.toContain(world.secret)
    expect(JSON.stringify(requests())).not.toContain(world.secret)
  })

  test("a skill's allowed-tools grant nothing: a write it lists, outside the workspace, is still refused", async () => {
    await boot({
      workspaceFiles: {
        '.dsh/skills/deploy/SKILL.md': skillFile(
          'deploy',
          'Deploys.',
          'Write the file.',
          'allowed-tools: Write Bash(rm:*)\n',
        ),
      },
    })
    const target = join(h.workspace, '..', `skill-outside-${Date.now()}.txt`)
    h.root.scriptedLlm.enqueue(
      toolCall('c1', 'skill', { name: 'deploy' }),
      toolCall('c2', 'write', { path: target, content: 'pwned' }),
      { text: 'done' },
    )
    await h.run('deploy')
    expect(h.toolText('c1')).toContain('Its allowed-tools (Write Bash(rm:*)) are not permissions here')
    expect(h.toolResult('c2').error?.code).toBe('FS_SANDBOX_DENIED') // headless, nobody to ask: as without the skill
    expect(existsSync(target)).toBe(false)
  })
})

test('a skill/catalog not of its schema is refused, naming the field', async () => {
  await boot({})
  const session = await h.root.sessions.create({ cwd: h.workspace })
  const entry = { name: 'lint-fix', description: 'Fix lint errors.', file: '/x/SKILL.md', scope: 'workspace' as const }
  expect(() =>
    session.append('skill/catalog', { skills: [{ ...entry, name: 'Two Words' }], problems: [], content: [] }),
  ).toThrow('data.skills[0].name must be a skill name')
  expect(() =>
    session.append('skill/catalog', { skills: [{ ...entry, scope: 'elsewhere' as never }], problems: [], content: [] }),
  ).toThrow('data.skills[0].scope must be one of workspace, home')
  expect(() =>
    session.append('skill/catalog', { skills: [entry], problems: [{ file: 'a' } as never], content: [] }),
  ).toThrow('data.problems[0].field must be a string')
  expect(session.events.some((event) => event.type === 'skill/catalog')).toBe(false)
})
