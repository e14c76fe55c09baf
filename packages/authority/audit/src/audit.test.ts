import { realpathSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, expect, test } from 'vitest'
import type {} from '@dsh/approval'
import type {} from '@dsh/grants'
import type {} from '@dsh/permission-presets'
import type {} from '@dsh/sandbox-policy'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'
import { auditSession, renderAudit } from './index.ts'

let h: Harness | undefined
afterEach(async () => h?.dispose())

const unconfined = (id: string, command: string) =>
  toolCall(id, 'bash', { command, sandbox: false, justification: `needs ${id}` })

test('the audit lists every authority change, probe, approval request and decision of a session, with seq and time', async () => {
  h = await bootComposition({ patch: scriptedPatch() })
  h.root.scriptedLlm.enqueue(unconfined('yes', 'true'), unconfined('no', 'false'), unconfined('always', 'make lint'), {
    text: 'done',
  })
  h.root.approval.answerer(
    h.root,
    async (request) =>
      request.callId === 'yes' ? 'allow_once' : request.callId === 'always' ? 'allow_always' : 'reject',
    { actor: 'user:web-tab' },
  )
  const { session } = await h.agent()
  h.root.permissionPresets.set(session, 'read-only', 'client:acp')
  await h.run('ask three times')
  const grant = session.last('grant/added')!.data
  await h.root.grants.revoke(grant.id, { cwd: session.cwd, actor: 'user:cli-flag', session })
  h.root.permissionPresets.set(session, 'workspace-write', 'user:web-tab')
  h.root.approval.setPolicy(session, 'never', 'client:sdk')
  const request = (callId: string) =>
    session.all('approval/asked').find((event) => event.data.callId === callId)!.data.requestId

  const entries = auditSession(session.events)
  expect(entries.map((entry) => [entry.kind, entry.summary])).toEqual([
    ['permission/preset', 'preset read-only chosen by client:acp (sandbox read-only, approval ask)'],
    ['sandbox/mode', 'sandbox mode set to read-only by client:acp'],
    ['approval/policy', 'approval policy set to ask by client:acp'],
    [
      'approval/asked',
      "approval asked for bash (bash: true [outside the sandbox]): it asks to run outside the sandbox (the session's mode is read-only): needs yes [call yes] [offers rule unconfined(true *)]",
    ],
    ['approval/decided', 'approval ALLOWED once by user (user:web-tab) for bash (bash: true [outside the sandbox])'],
    [
      'shell/env-policy',
      expect.stringMatching(
        /^command environment inherits (\w+, )*PATH(, \w+)*; sets nothing; include nothing; exclude nothing; withheld .*$/,
      ),
    ],
    [
      'sandbox/probe',
      expect.stringMatching(/^sandbox backend bubblewrap available: bubblewrap \(bwrap\) at \S+ ran a confined no-op$/),
    ],
    [
      'approval/asked',
      "approval asked for bash (bash: false [outside the sandbox]): it asks to run outside the sandbox (the session's mode is read-only): needs no [call no] [offers rule unconfined(false *)]",
    ],
    ['approval/decided', 'approval REJECTED by user (user:web-tab) for bash (bash: false [outside the sandbox])'],
    [
      'approval/asked',
      "approval asked for bash (bash: make lint [outside the sandbox]): it asks to run outside the sandbox (the session's mode is read-only): needs always [call always] [offers rule unconfined(make lint *)]",
    ],
    [
      'grant/added',
      `grant ${grant.id} added by user:web-tab: unconfined(make lint *) always in this workspace [request ${request('always')}]`,
    ],
    [
      'approval/decided',
      'approval ALLOWED always in this workspace by user (user:web-tab) for bash (bash: make lint [outside the sandbox])',
    ],
    ['grant/revoked', `grant ${grant.id} revoked by user:cli-flag: unconfined(make lint *) always in this workspace`],
    ['permission/preset', 'preset workspace-write chosen by user:web-tab (sandbox workspace-write, approval ask)'],
    ['sandbox/mode', 'sandbox mode read-only → workspace-write by user:web-tab'],
    ['approval/policy', 'approval policy ask → never by client:sdk'],
  ])
  for (const entry of entries)
    expect(session.events[entry.seq]).toMatchObject({ type: entry.kind, time: entry.time, data: entry.data })

  const text = renderAudit(entries, { sessionId: session.id })
  const lines = text.trimEnd().split('\n')
  expect(lines[0]).toBe(`Authority audit of session ${session.id}: 16 entries`)
  expect(lines[1]).toMatch(/^#0 +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z  preset read-only chosen by client:acp/)
  expect(lines).toHaveLength(17)
})

test('a log written before actors were recorded still reads, its changes shown as by unknown', () => {
  const old = [
    { type: 'permission/preset', seq: 0, time: 0, data: { preset: 'read-only', mode: 'read-only', approval: 'ask' } },
    { type: 'sandbox/mode', seq: 1, time: 0, data: { mode: 'read-only' } },
    { type: 'approval/policy', seq: 2, time: 0, data: { policy: 'ask' } },
  ]
  expect(auditSession(old).map((entry) => entry.summary)).toEqual([
    'preset read-only chosen by unknown (sandbox read-only, approval ask)',
    'sandbox mode set to read-only by unknown',
    'approval policy set to ask by unknown',
  ])
})

test('a session under the defaults renders as such', () => {
  expect(renderAudit(auditSession([{ type: 'user/message', seq: 0, time: 0, data: {} }]))).toBe(
    'Authority audit: 0 entries\n(no authority change, probe, approval or network decision in this session: it ran under the configured defaults)\n',
  )
})

test('a grants.yaml entry dsh did not write is in the audit as IGNORED, with the actor it claims and why', async () => {
  h = await bootComposition({ patch: scriptedPatch() })
  writeFileSync(
    join(h.home, 'grants.yaml'),
    `workspaces:\n  ${JSON.stringify(realpathSync(h.workspace))}:\n    - { id: g-forged01, rule: "unconfined(*)", actor: user:cli-flag, added: now }\n`,
  )
  h.root.scriptedLlm.enqueue(unconfined('x', 'true'), { text: 'done' })
  await h.run('try')
  const { session } = await h.agent()
  expect(
    auditSession(session.events)
      .filter((entry) => entry.kind === 'grant/ignored')
      .map((entry) => entry.summary),
  ).toEqual([
    'grant g-forged01 in grants.yaml IGNORED: unconfined(*) (claims user:cli-flag): it has no integrity tag: not written by this dsh (an older dsh or a hand edit): re-approve it',
  ])
})
