import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import type { ApprovalAnswer, ApprovalRequest } from '@dsh/approval'
import type {} from '@dsh/llm-scripted'
import type {} from '@dsh/sandbox-policy'
import type { ScriptedResponse } from '@dsh/llm-scripted'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'
import { tempDir } from '@dsh/test-harness/world'
import { readGrantsFile, realPath } from './index.ts'

async function boot(options: Parameters<typeof bootComposition>[0] = {}): Promise<Harness> {
  const h = await bootComposition({ ...options, patch: scriptedPatch({}, options.patch) })
  onTestFinished(() => h.dispose())
  return h
}

/** Answers every request with `answer` (as a web tab would) and records what was asked. */
function answering(h: Harness, answer: (request: ApprovalRequest) => ApprovalAnswer): ApprovalRequest[] {
  const asked: ApprovalRequest[] = []
  h.root.approval.answerer(h.root, async (request) => (asked.push(request), answer(request)), { actor: 'user:web-tab' })
  return asked
}

const NPM_PROJECT = {
  'package.json': JSON.stringify({ name: 'p', private: true, scripts: { test: 'echo ran >> ran.txt' } }),
}
const npmTest = (id: string): ScriptedResponse =>
  toolCall(id, 'bash', { command: 'npm test', sandbox: false, justification: 'the tests need the network' })
const runs = (workspace: string) =>
  existsSync(join(workspace, 'ran.txt'))
    ? readFileSync(join(workspace, 'ran.txt'), 'utf8').split('\n').filter(Boolean).length
    : 0

async function inNewSession(h: Harness, workspace: string, script: ScriptedResponse[]) {
  h.root.scriptedLlm.enqueue(...script)
  const agent = await h.root.agents.create({ cwd: workspace })
  agent.followup('again')
  await agent.whenIdle()
  return agent.session
}

test('allow_session stores the offered rule: the same command then runs without asking, and a new session asks again', async () => {
  const h = await boot({ workspaceFiles: NPM_PROJECT })
  const asked = answering(h, () => 'allow_session')
  h.root.scriptedLlm.enqueue(npmTest('first'), npmTest('second'), { text: 'done' })
  await h.run('run the tests twice')
  expect(asked.map((request) => [request.callId, request.rule])).toEqual([['first', 'unconfined(npm test *)']])
  expect(runs(h.workspace)).toBe(2)
  const grant = h.events('grant/added')[0]!.data
  expect(grant).toMatchObject({
    rule: 'unconfined(npm test *)',
    scope: 'session',
    actor: 'user:web-tab',
    requestId: asked[0]!.requestId,
  })
  expect(h.events('approval/decided')[0]!.data).toMatchObject({
    answer: 'allow_session',
    by: 'user',
    actor: 'user:web-tab',
  })
  // grant/added precedes the decision it came from, and nothing reached grants.yaml.
  expect(h.types().indexOf('grant/added')).toBeLessThan(h.types().indexOf('approval/decided'))
  expect(existsSync(join(h.home, 'grants.yaml'))).toBe(false)

  await inNewSession(h, h.workspace, [npmTest('third'), { text: 'done' }])
  expect(asked.map((request) => request.callId)).toEqual(['first', 'third'])
})

test('allow_always is kept in grants.yaml (0600) for this workspace only, survives a new process, and revoke removes it', async () => {
  const home = tempDir('dsh-home-')
  const workspace = tempDir('dsh-ws-')
  const other = tempDir('dsh-ws-')
  for (const dir of [workspace, other]) writeFileSync(join(dir, 'package.json'), NPM_PROJECT['package.json'])
  const first = await boot({ home, workspace })
  answering(first, () => 'allow_always')
  first.root.scriptedLlm.enqueue(npmTest('a'), { text: 'done' })
  await first.run('test')
  const file = join(home, 'grants.yaml')
  expect(statSync(file).mode & 0o777).toBe(0o600)
  const stored = await readGrantsFile(file)
  expect(stored.workspaces[realPath(workspace)]).toEqual([
    expect.objectContaining({
      rule: 'unconfined(npm test *)',
      actor: 'user:web-tab',
      session: (await first.agent()).session.id,
    }),
  ])
  expect(first.events('grant/added')[0]!.data).toMatchObject({ scope: 'workspace', rule: 'unconfined(npm test *)' })
  await first.dispose()

  const second = await boot({ home, workspace })
  const asked = answering(second, () => 'reject')
  await inNewSession(second, workspace, [npmTest('b'), { text: 'done' }])
  expect(asked).toEqual([])
  expect(runs(workspace)).toBe(2)
  await inNewSession(second, other, [npmTest('c'), { text: 'done' }])
  expect(asked.map((request) => request.callId)).toEqual(['c'])
  expect(runs(other)).toBe(0)

  const [removed] = await second.root.grants.revoke('unconfined(npm test *)', {
    cwd: workspace,
    actor: 'user:cli-flag',
  })
  expect(removed).toMatchObject({ rule: 'unconfined(npm test *)' })
  expect((await readGrantsFile(file)).workspaces[realPath(workspace)]).toBeUndefined()
  await inNewSession(second, workspace, [npmTest('d'), { text: 'done' }])
  expect(asked.map((request) => request.callId)).toEqual(['c', 'd'])
  await expect(
    second.root.grants.revoke('unconfined(npm test *)', { cwd: workspace, actor: 'user:cli-flag' }),
  ).rejects.toThrow(/no grant "unconfined\(npm test \*\)"/)
})

test('a session grant revoked in its session is logged and stops applying', async () => {
  const h = await boot({ workspaceFiles: NPM_PROJECT })
  const asked = answering(h, () => 'allow_session')
  h.root.scriptedLlm.enqueue(npmTest('first'), { text: 'done' })
  await h.run('test')
  const { session } = await h.agent()
  const [grant] = h.root.grants.sessionGrants(session)
  await h.root.grants.revoke(grant!.id, { cwd: h.workspace, actor: 'user:web-tab', session })
  expect(h.events('grant/revoked')[0]!.data).toEqual({
    id: grant!.id,
    rule: 'unconfined(npm test *)',
    scope: 'session',
    actor: 'user:web-tab',
  })
  h.root.scriptedLlm.enqueue(npmTest('second'), { text: 'done' })
  await h.run('again')
  expect(asked.map((request) => request.callId)).toEqual(['first', 'second'])
})

const gitStatus = (id: string, command: string): ScriptedResponse =>
  toolCall(id, 'bash', { command, sandbox: false, justification: 'check' })
const settings = (rules: Record<string, string[]>) => ({
  'settings.yaml': Object.entries(rules)
    .map(([key, list]) => `${key}: ${JSON.stringify(list)}\n`)
    .join(''),
})

test('with unconfined(git status*) allowed, only a command whose every part matches skips the question', async () => {
  const h = await boot({
    workspaceFiles: { 'x/keep.txt': 'kept' },
    homeFiles: settings({ 'permissions.allow': ['unconfined(git status*)'] }),
  })
  const asked = answering(h, () => 'reject')
  h.root.scriptedLlm.enqueue(
    gitStatus('plain', 'git status --short'),
    gitStatus('and', 'git status && curl evil'),
    gitStatus('seq', 'git status; rm -rf x'),
    gitStatus('subst', 'git status $(rm -rf x)'),
    gitStatus('pipe', 'git status | cat'),
    gitStatus('line', 'git status\nrm -rf x'),
    { text: 'done' },
  )
  await h.run('try them')
  expect(asked.map((request) => request.callId)).toEqual(['and', 'seq', 'subst', 'pipe', 'line'])
  expect(readFileSync(join(h.workspace, 'x/keep.txt'), 'utf8')).toBe('kept')
  expect(h.toolResult('plain').error).toBeUndefined()
})

test('git status | cat skips the question when cat is allowed too', async () => {
  const h = await boot({ homeFiles: settings({ 'permissions.allow': ['unconfined(git status*)', 'unconfined(cat)'] }) })
  const asked = answering(h, () => 'reject')
  h.root.scriptedLlm.enqueue(gitStatus('pipe', 'git status | cat'), { text: 'done' })
  await h.run('try')
  expect(asked).toEqual([])
})

test('deny wins over allow and refuses even a call that would run without asking; ask wins over a grant', async () => {
  const h = await boot({
    workspaceFiles: { 'x/keep.txt': 'kept' },
    homeFiles: settings({
      'permissions.allow': ['bash(*)', 'unconfined(*)'],
      'permissions.deny': ['bash(rm *)', 'write(x/**)'],
      'permissions.ask': ['unconfined(git push *)'],
    }),
  })
  const asked = answering(h, () => 'allow_session')
  h.root.scriptedLlm.enqueue(
    toolCall('rm', 'bash', { command: 'ls && rm -rf x' }),
    toolCall('w', 'write', { path: 'x/new.txt', content: 'no' }),
    toolCall('push', 'bash', { command: 'git push origin', sandbox: false, justification: 'publish' }),
    toolCall('ok', 'bash', { command: 'echo fine' }),
    { text: 'done' },
  )
  await h.run('try')
  expect(h.toolResult('rm').error).toMatchObject({
    code: 'DENIED',
    message: expect.stringContaining('the rule bash(rm *) in permissions.deny refuses it'),
  })
  expect(h.toolResult('w').error?.code).toBe('DENIED')
  expect(existsSync(join(h.workspace, 'x/keep.txt'))).toBe(true)
  expect(existsSync(join(h.workspace, 'x/new.txt'))).toBe(false)
  // The ask rule asks, offers no rule, and an allow_session answer to it stores nothing.
  expect(asked.map((request) => [request.callId, request.rule])).toEqual([['push', undefined]])
  expect(h.events('approval/decided')[0]!.data).toMatchObject({
    answer: 'allow_once',
    note: expect.stringContaining('offered no rule'),
  })
  expect(h.events('grant/added')).toEqual([])
  expect(h.toolResult('ok').error).toBeUndefined()
})

test('a grant never widens confinement: bash(*) allowed still asks before running outside the sandbox, and a confined command still cannot write outside', async () => {
  const outside = tempDir('dsh-outside-')
  const h = await boot({ homeFiles: settings({ 'permissions.allow': ['bash(*)'] }) })
  h.root.scriptedLlm.enqueue(
    toolCall('out', 'bash', { command: `touch ${outside}/unconfined`, sandbox: false, justification: 'x' }),
    toolCall('in', 'bash', { command: `touch ${outside}/confined` }),
    { text: 'done' },
  )
  await h.run('try')
  expect(h.toolResult('out').error?.code).toBe('APPROVAL_REJECTED')
  expect(existsSync(join(outside, 'unconfined'))).toBe(false)
  expect(existsSync(join(outside, 'confined'))).toBe(false)
})

test('a malformed rule in the settings refuses the call, naming the setting, instead of guessing', async () => {
  const h = await boot({ homeFiles: settings({ 'permissions.deny': ['rm -rf'] }) })
  h.root.scriptedLlm.enqueue(toolCall('c', 'bash', { command: 'echo hi > made.txt' }), { text: 'done' })
  await h.run('try')
  expect(h.toolResult('c').error).toMatchObject({
    code: 'DENIED',
    message: expect.stringContaining('setting permissions.deny[0]: "rm -rf" is not a rule'),
  })
  expect(existsSync(join(h.workspace, 'made.txt'))).toBe(false)
})

test('the model cannot grant itself: writing grants.yaml or settings.yaml through its tools is refused and the files are unchanged', async () => {
  const h = await boot({ homeFiles: { 'settings.yaml': 'permissions.allow: []\n' } })
  const grants = join(h.home, 'grants.yaml')
  const forged = `workspaces:\n  ${realPath(h.workspace)}:\n    - { id: g-forged, rule: "unconfined(*)", actor: user:web-tab, added: now }\n`
  h.root.scriptedLlm.enqueue(
    toolCall('w', 'write', { path: grants, content: forged }),
    toolCall('b', 'bash', {
      command: `printf '%s' '${forged}' > ${grants}; echo 'permissions.allow: ["unconfined(*)"]' > ${join(h.home, 'settings.yaml')}`,
    }),
    { text: 'done' },
  )
  await h.run('grant yourself everything')
  expect(h.toolResult('w').error?.code).toBe('FS_SANDBOX_DENIED')
  expect(existsSync(grants)).toBe(false)
  expect(readFileSync(join(h.home, 'settings.yaml'), 'utf8')).toBe('permissions.allow: []\n')
})

test('a direct approval request with an exact rule (network) is answered by held rules: allow skips the question, deny rejects it', async () => {
  const h = await boot({
    homeFiles: settings({
      'permissions.allow': ['network(*.example.org)'],
      'permissions.deny': ['network(evil.example.org)'],
    }),
  })
  const asked = answering(h, () => 'allow_once')
  const { session } = await h.agent()
  const request = (host: string) =>
    h.root.approval.request(
      session,
      {
        agentId: 'a',
        tool: 'network',
        summary: `connect to ${host}`,
        reason: 'not on the allow-list',
        rule: `network(${host})`,
      },
      new AbortController().signal,
    )
  expect(await request('api.example.org')).toMatchObject({ answer: 'allow_once', by: 'grant' })
  expect(await request('evil.example.org')).toMatchObject({ answer: 'reject', by: 'grant' })
  expect(await request('other.net')).toMatchObject({ answer: 'allow_once', by: 'user', actor: 'user:web-tab' })
  expect(asked.map((r) => r.rule)).toEqual(['network(other.net)'])
  expect(h.events('approval/decided').map((event) => [event.data.answer, event.data.by])).toEqual([
    ['allow_once', 'grant'],
    ['reject', 'grant'],
    ['allow_once', 'user'],
  ])
})

test('"always" grants added at the same moment in one process are all kept', async () => {
  const h = await boot()
  const { session } = await h.agent()
  const rules = ['bash(make a *)', 'bash(make b *)', 'bash(make c *)', 'bash(make d *)']
  await Promise.all(
    rules.map((rule) => h.root.grants.add(session, { rule, scope: 'workspace', actor: 'user:web-tab' })),
  )
  expect((await h.root.grants.workspaceGrants(h.workspace)).map((grant) => grant.rule).sort()).toEqual(rules)
})

/** A grants.yaml entry written by something other than dsh (the model, a hand edit, an older dsh): no valid tag. */
const forgedEntry = (workspace: string, extra = '') =>
  `workspaces:\n  ${JSON.stringify(realPath(workspace))}:\n    - { id: g-forged01, rule: "unconfined(npm test *)", actor: user:web-tab, added: "2026-12-01T00:00:00.000Z"${extra} }\n`

test('attack: a grants.yaml entry dsh did not write (any actor) is ignored for decisions, listed as ignored with why, and logged once in the session', async () => {
  const h = await boot({ workspaceFiles: NPM_PROJECT })
  writeFileSync(join(h.home, 'grants.yaml'), forgedEntry(h.workspace), { mode: 0o600 })
  const asked = answering(h, () => 'reject')
  h.root.scriptedLlm.enqueue(npmTest('a'), npmTest('b'), { text: 'done' })
  await h.run('run the tests twice')
  expect(asked.map((request) => request.callId)).toEqual(['a', 'b'])
  expect(runs(h.workspace)).toBe(0)
  const reason = 'it has no integrity tag: not written by this dsh (an older dsh or a hand edit): re-approve it'
  expect(h.events('grant/ignored').map((event) => event.data)).toEqual([
    { id: 'g-forged01', rule: 'unconfined(npm test *)', claimedActor: 'user:web-tab', reason },
  ])
  const listing = await h.root.grants.list(h.workspace)
  expect(listing.always).toEqual([])
  expect(listing.ignored).toEqual([{ grant: expect.objectContaining({ id: 'g-forged01' }), reason }])
})

test('a tag dsh wrote stops matching when the entry is edited, moved to another workspace, or given a made-up tag', async () => {
  const other = tempDir('dsh-ws-')
  const h = await boot({ workspaceFiles: NPM_PROJECT })
  const { session } = await h.agent()
  await h.root.grants.add(session, { rule: 'bash(make *)', scope: 'workspace', actor: 'user:web-tab' })
  const file = join(h.home, 'grants.yaml')
  const written = await readGrantsFile(file)
  const [entry] = written.workspaces[realPath(h.workspace)]!
  expect(entry!.tag).toMatch(/^hmac-sha256:[0-9a-f]{64}$/)
  expect(statSync(join(h.home, 'grants.key')).mode & 0o777).toBe(0o600)
  expect((await h.root.grants.workspaceGrants(h.workspace)).map((grant) => grant.id)).toEqual([entry!.id])

  const rewrite = (workspaces: Record<string, unknown[]>) => writeFileSync(file, JSON.stringify({ workspaces }))
  rewrite({ [realPath(h.workspace)]: [{ ...entry, rule: 'unconfined(*)' }], [realPath(other)]: [entry] })
  expect(await h.root.grants.workspaceGrants(h.workspace)).toEqual([])
  expect(await h.root.grants.workspaceGrants(other)).toEqual([])
  expect((await h.root.grants.list(other)).ignored[0]!.reason).toMatch(
    /^its integrity tag does not match: not written by this dsh/,
  )
  rewrite({ [realPath(h.workspace)]: [{ ...entry, tag: `hmac-sha256:${'0'.repeat(64)}` }] })
  expect(await h.root.grants.workspaceGrants(h.workspace)).toEqual([])
  rewrite({ [realPath(h.workspace)]: [entry] })
  expect((await h.root.grants.workspaceGrants(h.workspace)).map((grant) => grant.id)).toEqual([entry!.id])
})

test('without the key file every tagged entry is ignored, naming the missing key; the next grant makes a new key', async () => {
  const h = await boot()
  const { session } = await h.agent()
  await h.root.grants.add(session, { rule: 'bash(make *)', scope: 'workspace', actor: 'user:web-tab' })
  const key = join(h.home, 'grants.key')
  const before = readFileSync(key, 'utf8')
  rmSync(key)
  expect((await h.root.grants.list(h.workspace)).ignored.map((ignored) => ignored.reason)).toEqual([
    `its integrity tag cannot be checked: this dsh's grant key ${key} is missing: re-approve it`,
  ])
  await h.root.grants.add(session, { rule: 'bash(make b *)', scope: 'workspace', actor: 'user:web-tab' })
  expect(readFileSync(key, 'utf8')).not.toBe(before)
  expect((await h.root.grants.workspaceGrants(h.workspace)).map((grant) => grant.rule)).toEqual(['bash(make b *)'])
})

test("attack: the grant key is a secret path: the model's read and a confined cat of it see nothing of it", async () => {
  const h = await boot()
  const { session } = await h.agent()
  await h.root.grants.add(session, { rule: 'bash(make *)', scope: 'workspace', actor: 'user:web-tab' })
  const key = join(h.home, 'grants.key')
  const secret = readFileSync(key, 'utf8').trim()
  h.root.scriptedLlm.enqueue(
    toolCall('r', 'read', { path: key }),
    toolCall('c', 'bash', { command: `cat ${key}; ls -la ${h.home}` }),
    { text: 'done' },
  )
  await h.run('read the key')
  expect(h.toolResult('r').error?.code).toBe('FS_READ_DENIED')
  expect(JSON.stringify(h.events('tool/result'))).not.toContain(secret)
})

test('the grant key stays a secret path even for a workspace inside $DSH_HOME, where the $DSH_HOME rule is left out', async () => {
  const h = await boot()
  const inside = join(h.home, 'project')
  const rules = h.root.sandboxPolicy.pathRules([inside]).denyRead.map((rule) => rule.rule)
  expect(rules).not.toContain('$DSH_HOME')
  expect(rules).toContain('$DSH_HOME/grants.key')
})

test('a malformed entry planted beside a genuine one is ignored, naming what is wrong; the genuine grant still applies', async () => {
  const h = await boot()
  const { session } = await h.agent()
  const genuine = await h.root.grants.add(session, { rule: 'bash(make *)', scope: 'workspace', actor: 'user:web-tab' })
  const file = join(h.home, 'grants.yaml')
  const workspace = realPath(h.workspace)
  const entries = (await readGrantsFile(file)).workspaces[workspace]!
  writeFileSync(
    file,
    JSON.stringify({
      workspaces: {
        [workspace]: [...entries, { id: 'g-model001', rule: 'unconfined(*)', actor: 'model' }, 'not an entry'],
      },
    }),
  )
  const listing = await h.root.grants.list(h.workspace)
  expect(listing.always.map((grant) => grant.id)).toEqual([genuine.id])
  expect(listing.ignored.map((ignored) => ignored.reason)).toEqual([
    expect.stringMatching(
      /^it is malformed \(workspaces\[".*"\]\[1\]: actor must be one of .* \(got "model"\)\): not written by this dsh/,
    ),
    expect.stringMatching(/^it is malformed \(workspaces\[".*"\]\[2\]: an entry must be a mapping\)/),
  ])
  await h.root.grants.revoke('g-model001', { cwd: h.workspace, actor: 'user:cli-flag' })
  expect((await h.root.grants.list(h.workspace)).ignored).toHaveLength(1)
})
