import { execFileSync } from 'node:child_process'
import { existsSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, expect, test } from 'vitest'
import type { LlmRequest } from '@dsh/llm'
import { bootComposition, scriptedPatch, type Harness } from '@dsh/test-harness'
import { outsideDir, secretWorld } from '@dsh/test-harness/world'
import type {} from '@dsh/permission-presets'

let h: Harness
afterEach(async () => h?.dispose())

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.org', ...args], {
    cwd,
    stdio: 'pipe',
  }).toString()

async function boot(options: { patch?: string; files?: Record<string, string>; home?: string } = {}) {
  h = await bootComposition({
    patch: scriptedPatch({ runtimeContext: true }, options.patch ?? ''),
    workspaceFiles: options.files ?? {
      'package.json': JSON.stringify({ scripts: { test: 'vitest run', lint: 'eslint .', start: 'node server.js' } }),
      'src/a.ts': 'export {}\n',
      Makefile: 'check:\n\ttrue\n',
    },
    ...(options.home ? { home: options.home } : {}),
  })
  return h
}

function repository(workspace: string) {
  git(workspace, 'init', '-q', '-b', 'main')
  git(workspace, 'add', '.')
  git(workspace, 'commit', '-q', '-m', 'first commit')
  writeFileSync(join(workspace, 'new.txt'), 'x\n')
}

const firstUserTexts = (request: LlmRequest) =>
  request.messages
    .filter((message) => message.role === 'user')
    .flatMap((message) => message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])))

test('the first turn logs the runtime context once, the request carries it, and a later turn with the same facts logs none', async () => {
  await boot()
  repository(h.workspace)
  h.root.scriptedLlm.enqueue({ text: 'one' }, { text: 'two' })
  await h.run('first')
  await h.run('second')
  const logged = h.events('runtime/context')
  expect(logged).toHaveLength(1)
  const { text, facts } = logged[0]!.data
  expect(facts).toMatchObject({
    cwd: h.workspace,
    mode: 'workspace-write',
    branch: 'main',
    date: new Date().toISOString().slice(0, 10),
  })
  expect(text).toContain(`- Working directory: ${h.workspace}`)
  expect(text).toContain('- Git branch: main; status: 1 untracked: new.txt')
  expect(text).toMatch(/- Recent commits:\n {2}[0-9a-f]+ first commit/)
  expect(text).toContain('- Top level: Makefile, new.txt, package.json, src/')
  expect(text).toContain('- Project commands: npm test (vitest run); npm run lint (eslint .); make check')
  const [first, second] = h.root.scriptedLlm.requests as LlmRequest[]
  expect(firstUserTexts(first!)).toContain(text)
  expect(firstUserTexts(second!).filter((item) => item === text)).toHaveLength(1)
})

test('a change of a stable fact (the sandbox mode) logs a new runtime context before the next request', async () => {
  await boot()
  h.root.scriptedLlm.enqueue({ text: 'one' }, { text: 'two' })
  await h.run('first')
  h.root.permissionPresets.set((await h.agent()).session, 'read-only', 'user:cli-flag')
  await h.run('second')
  expect(h.events('runtime/context').map((event) => event.data.facts.mode)).toEqual(['workspace-write', 'read-only'])
  // Logged before the turn's prompt, so the user's words stay the last message.
  expect(firstUserTexts((h.root.scriptedLlm.requests as LlmRequest[])[1]!).slice(-2)).toEqual([
    expect.stringContaining('- Sandbox mode: read-only'),
    'second',
  ])
})

test('each part can be turned off', async () => {
  await boot({
    patch:
      '- id: runtime-context\n  config: { os: false, date: false, shell: false, sandbox: false, git: false, overview: 0, commands: false }\n',
  })
  h.root.scriptedLlm.enqueue({ text: 'ok' })
  await h.run('go')
  const [event] = h.events('runtime/context')
  expect(event!.data.facts).toEqual({ cwd: h.workspace })
  expect(event!.data.text.split('\n').slice(1)).toEqual([`- Working directory: ${h.workspace}`])
})

test("a hostile repository's fsmonitor does not run, and a manifest linked to a secret reaches no log", async () => {
  const outside = outsideDir()
  const marker = join(outside, 'pwned')
  const world = secretWorld()
  writeFileSync(world.sshKey, JSON.stringify({ scripts: { test: world.secret } }))
  await boot({ files: { 'src/a.ts': 'export {}\n' }, home: world.dshHome })
  repository(h.workspace)
  git(h.workspace, 'config', 'core.fsmonitor', `touch ${marker}`)
  symlinkSync(world.sshKey, join(h.workspace, 'package.json'))
  h.root.scriptedLlm.enqueue({ text: 'ok' })
  await h.run('go')
  expect(existsSync(marker)).toBe(false)
  const [event] = h.events('runtime/context')
  expect(event!.data.facts.branch).toBe('main')
  expect(JSON.stringify(h.events())).not.toContain(world.secret)
  expect(JSON.stringify(h.root.scriptedLlm.requests)).not.toContain(world.secret)
})
