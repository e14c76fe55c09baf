import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import type { ScriptedResponse } from '@dsh/llm-scripted'
import { bootComposition, scriptedPatch, toolCall as call, type Harness } from '@dsh/test-harness'
import { filesContaining, secretWorld } from '@dsh/test-harness/world'

/** Secrets in places a search does not skip anyway (not hidden): a user rule's folder and another session's log. */
function plant() {
  const world = secretWorld()
  const token = join(world.home, 'vault', 'token.txt')
  const otherLog = join(world.dshHome, 'sessions', 'elsewhere', 'session.jsonl')
  for (const file of [token, otherLog]) {
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(file, `${world.secret}\n`)
  }
  return { ...world, token, otherLog }
}

async function boot(script: ScriptedResponse[], world: ReturnType<typeof plant>, patch = ''): Promise<Harness> {
  const h = await bootComposition({
    patch: scriptedPatch({}, patch),
    home: world.dshHome,
    homeFiles: { 'settings.yaml': "sandbox.denyRead: ['~/vault']\n" },
    workspaceFiles: { 'src/a.ts': 'SECRET-free code\n' },
  })
  onTestFinished(() => h.dispose())
  h.root.scriptedLlm.enqueue(...script, { text: 'done' })
  return h
}

const searches = (world: ReturnType<typeof plant>) => [
  call('home', 'grep', { pattern: 'SECRET', path: world.home, output_mode: 'content' }),
  call('dsh', 'grep', { pattern: 'SECRET', path: world.dshHome, output_mode: 'content' }),
  call('above', 'grep', { pattern: 'SECRET', path: dirname(world.home), output_mode: 'content' }),
  call('files', 'glob', { pattern: '**/*', path: world.home }),
  call('inside', 'grep', { pattern: 'SECRET', path: join(world.home, 'vault') }),
  call('link', 'grep', { pattern: 'SECRET', output_mode: 'content' }),
]

for (const [engine, patch] of [
  ['ripgrep (confined)', ''],
  ['the built-in search', "- id: tool-fs-search\n  config: { ripgrep: '' }\n"],
] as const) {
  test(`with ${engine}, grep and glob from above a secret folder find nothing in it, and one inside it is refused by rule`, async () => {
    const world = plant()
    const h = await boot(searches(world), world, patch)
    symlinkSync(world.token, join(h.workspace, 'src', 'notes.txt'))
    await h.run('search everywhere')
    for (const id of ['home', 'dsh', 'above', 'files', 'link'])
      expect(JSON.stringify(h.toolResult(id))).not.toContain(world.secret)
    expect(h.toolText('files')).not.toContain('token.txt')
    expect(h.toolText('link')).toContain('SECRET-free code')
    expect(h.toolResult('inside').error).toMatchObject({
      code: 'FS_READ_DENIED',
      message: expect.stringContaining('(rule ~/vault)'),
    })
    expect(JSON.stringify(h.events())).not.toContain(world.secret)
    await (await h.agent()).session.flush()
    expect(filesContaining(join(world.dshHome, 'sessions'), world.secret)).toEqual([world.otherLog])
  })
}
