// End to end: `dsh grants list|revoke` on grants.yaml, and `--approve` that stays "once for everything asked".
import { existsSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { ensureGrantKey, grantTag, writeGrantsFile } from '@dsh/grants'
import { dsh, dshOk, makeWorld, storedEvents, storedSessionIds, type World } from './test-support/dsh.ts'

let world: World
beforeEach(async () => {
  world = await makeWorld()
})
afterEach(async () => {
  await world.dispose()
})

const grantsFile = () => join(world.home, 'grants.yaml')
/** Grants as dsh writes them: each tagged with the home's grant key (made here, as dsh makes it on first use). */
const storeGrants = async (workspace: string, grants: { id: string; rule: string }[]) => {
  const key = await ensureGrantKey(join(world.home, 'grants.key'))
  const entries = grants.map((grant) => ({
    ...grant,
    actor: 'user:web-tab' as const,
    added: '2026-12-01T00:00:00.000Z',
  }))
  await writeGrantsFile(grantsFile(), {
    workspaces: { [workspace]: entries.map((entry) => ({ ...entry, tag: grantTag(key, workspace, entry) })) },
  })
}

test("dsh grants list shows this workspace's always grants and the settings' rules; revoke by rule or id removes them from grants.yaml", async () => {
  const repo = realpathSync(world.repo)
  await storeGrants(repo, [
    { id: 'g-00000001', rule: 'unconfined(npm test *)' },
    { id: 'g-00000002', rule: 'write(docs/**)' },
  ])
  writeFileSync(join(world.home, 'settings.yaml'), 'permissions.deny: ["bash(rm -rf *)"]\n')
  const listed = await dshOk(world, ['grants', 'list'])
  expect(listed.stdout).toBe(
    `Grants of ${repo}\n` +
      'g-00000001  unconfined(npm test *)  always, by user:web-tab at 2026-12-01T00:00:00.000Z\n' +
      'g-00000002  write(docs/**)  always, by user:web-tab at 2026-12-01T00:00:00.000Z\n' +
      'setting permissions.deny  bash(rm -rf *)\n',
  )
  const json = (await dshOk(world, ['grants', 'list', '--json'])).stdout
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line))
  expect(json.map((line) => [line.scope, line.id ?? line.effect, line.rule])).toEqual([
    ['workspace', 'g-00000001', 'unconfined(npm test *)'],
    ['workspace', 'g-00000002', 'write(docs/**)'],
    ['settings', 'deny', 'bash(rm -rf *)'],
  ])

  expect((await dshOk(world, ['grants', 'revoke', 'unconfined(npm', 'test', '*)'])).stdout).toBe(
    'revoked g-00000001  unconfined(npm test *)\n',
  )
  expect((await dshOk(world, ['grants', 'revoke', 'g-00000002'])).stdout).toBe('revoked g-00000002  write(docs/**)\n')
  expect(readFileSync(grantsFile(), 'utf8')).not.toContain('rule:')
  expect(statSync(grantsFile()).mode & 0o777).toBe(0o600)
  const again = await dsh(world, ['grants', 'revoke', 'g-00000002'])
  expect(again.code).toBe(2)
  expect(again.stderr).toBe(`dsh: no grant "g-00000002" in ${repo} (see dsh grants list)\n`)
})

test('a grant of another workspace is neither listed nor revoked here', async () => {
  await storeGrants('/some/other/workspace', [{ id: 'g-0000000a', rule: 'bash(make *)' }])
  expect((await dshOk(world, ['grants', 'list'])).stdout).toContain('(no "always" grants in this workspace)')
  expect((await dsh(world, ['grants', 'revoke', 'g-0000000a'])).code).toBe(2)
  expect(readFileSync(grantsFile(), 'utf8')).toContain('g-0000000a')
})

test('an entry dsh did not write is listed as ignored with why, applies nowhere, and revoke removes it', async () => {
  const repo = realpathSync(world.repo)
  await storeGrants(repo, [{ id: 'g-00000001', rule: 'write(docs/**)' }])
  const forged = `    - { id: g-forged01, rule: "unconfined(*)", actor: user:web-tab, added: "2026-12-02T00:00:00.000Z" }\n`
  writeFileSync(grantsFile(), readFileSync(grantsFile(), 'utf8') + forged)
  const reason = 'it has no integrity tag: not written by this dsh (an older dsh or a hand edit): re-approve it'
  expect((await dshOk(world, ['grants', 'list'])).stdout).toBe(
    `Grants of ${repo}\ng-00000001  write(docs/**)  always, by user:web-tab at 2026-12-01T00:00:00.000Z\ng-forged01  unconfined(*)  IGNORED (claims user:web-tab): ${reason}\n`,
  )
  const json = (await dshOk(world, ['grants', 'list', '--json'])).stdout
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line))
  expect(json.map((line) => [line.id, line.ignored])).toEqual([
    ['g-00000001', undefined],
    ['g-forged01', reason],
  ])
  expect((await dshOk(world, ['grants', 'revoke', 'g-forged01'])).stdout).toBe('revoked g-forged01  unconfined(*)\n')
  expect(readFileSync(grantsFile(), 'utf8')).not.toContain('g-forged01')
})

test('a grants.yaml that is not YAML is one clear error naming the file; a malformed entry is listed as ignored, naming it', async () => {
  writeFileSync(grantsFile(), 'workspaces: [unclosed\n')
  const broken = await dsh(world, ['grants', 'list'])
  expect(broken.code).toBe(1)
  expect(broken.stderr).toContain(`${grantsFile()}: not valid YAML`)
  const repo = realpathSync(world.repo)
  writeFileSync(
    grantsFile(),
    `workspaces:\n  ${JSON.stringify(repo)}:\n    - { id: g-1, rule: "shell(ls)", actor: user:web-tab }\n`,
  )
  expect((await dshOk(world, ['grants', 'list'])).stdout).toContain(
    `g-1  shell(ls)  IGNORED (claims user:web-tab): it is malformed (workspaces["${repo}"][0]: rule: unknown rule kind "shell"`,
  )
})

test('--approve answers once for everything asked: it stores no grant', async () => {
  const ask = (id: string) => ({
    toolCalls: [
      { id, name: 'bash', arguments: { command: `touch ${id}.txt`, sandbox: false, justification: 'needs it' } },
    ],
  })
  world.llm.enqueue(ask('a1'), ask('a2'), { text: 'done' })
  await dshOk(world, ['--approve', 'touch two files'])
  const [id] = storedSessionIds(world)
  const events = storedEvents(world, id!)
  expect(
    events.filter((event) => event.type === 'approval/decided').map((event) => [event.data.answer, event.data.actor]),
  ).toEqual([
    ['allow_once', 'user:cli-flag'],
    ['allow_once', 'user:cli-flag'],
  ])
  expect(events.some((event) => event.type === 'grant/added')).toBe(false)
  expect(existsSync(grantsFile())).toBe(false)
})
