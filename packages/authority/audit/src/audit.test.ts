import { afterEach, expect, test } from 'vitest'
import type {} from '@dsh/approval'
import type {} from '@dsh/permission-presets'
import type {} from '@dsh/sandbox-policy'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'
import { auditSession, renderAudit } from './index.ts'

let h: Harness | undefined
afterEach(async () => h?.dispose())

const unconfined = (id: string, command: string) => toolCall(id, 'bash', { command, sandbox: false, justification: `needs ${id}` })

test('the audit lists every authority change, probe, approval request and decision of a session, with seq and time', async () => {
  h = await bootComposition({ patch: scriptedPatch() })
  h.root.scriptedLlm.enqueue(unconfined('yes', 'true'), unconfined('no', 'false'), { text: 'done' })
  h.root.approval.answerer(h.root, async (request) => (request.callId === 'yes' ? 'allow_once' : 'reject'))
  const { session } = await h.agent()
  h.root.permissionPresets.set(session, 'read-only')
  await h.run('ask twice')
  h.root.permissionPresets.set(session, 'workspace-write')
  h.root.approval.setPolicy(session, 'never')

  const entries = auditSession(session.events)
  expect(entries.map((entry) => [entry.kind, entry.summary])).toEqual([
    ['permission/preset', 'preset read-only chosen (sandbox read-only, approval ask)'],
    ['sandbox/mode', 'sandbox mode set to read-only'],
    ['approval/policy', 'approval policy set to ask'],
    ['approval/asked', "approval asked for bash (bash: true [outside the sandbox]): it asks to run outside the sandbox (the session's mode is read-only): needs yes [call yes]"],
    ['approval/decided', 'approval ALLOWED once by user for bash (bash: true [outside the sandbox])'],
    ['shell/env-policy', expect.stringMatching(/^command environment inherits (\w+, )*PATH(, \w+)*; sets nothing; include nothing; exclude nothing; withheld .*$/)],
    ['sandbox/probe', expect.stringMatching(/^sandbox backend bubblewrap available: bubblewrap \(bwrap\) at \S+ ran a confined no-op$/)],
    ['approval/asked', "approval asked for bash (bash: false [outside the sandbox]): it asks to run outside the sandbox (the session's mode is read-only): needs no [call no]"],
    ['approval/decided', 'approval REJECTED by user for bash (bash: false [outside the sandbox])'],
    ['permission/preset', 'preset workspace-write chosen (sandbox workspace-write, approval ask)'],
    ['sandbox/mode', 'sandbox mode read-only → workspace-write'],
    ['approval/policy', 'approval policy ask → never'],
  ])
  for (const entry of entries) expect(session.events[entry.seq]).toMatchObject({ type: entry.kind, time: entry.time, data: entry.data })

  const text = renderAudit(entries, { sessionId: session.id })
  const lines = text.trimEnd().split('\n')
  expect(lines[0]).toBe(`Authority audit of session ${session.id}: 12 entries`)
  expect(lines[1]).toMatch(/^#0 +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z  preset read-only chosen/)
  expect(lines).toHaveLength(13)
})

test('a session under the defaults renders as such', () => {
  expect(renderAudit(auditSession([{ type: 'user/message', seq: 0, time: 0, data: {} }]))).toBe('Authority audit: 0 entries\n(no authority change, probe, approval or network decision in this session: it ran under the configured defaults)\n')
})
