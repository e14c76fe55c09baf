import { expect, test } from 'vitest'
import type { Item, LogEvent, ViewChange } from './items.ts'
import { SessionView } from './view.ts'

const usage = { input: 100, output: 20, cacheRead: 50, cacheWrite: 0 }
const none = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }
const serverError = { code: 'SERVER', message: 'the provider answered HTTP 503' }

/** A log as the runtime writes it: seq from 0, one millisecond apart. */
const log = (...entries: [string, unknown][]): LogEvent[] =>
  entries.map(([type, data], seq) => ({ type, seq, time: 1000 + seq, data }))

/**
 * Three turns: parallel tool calls, one behind an approval, a retried request, and a result later pruned; a
 * compaction whose summary replaces the first turn, then a turn cancelled mid-answer; then a turn cut by a
 * crash and closed by repair. Sprinkled with kinds the view does not show and one it does not know.
 */
const realistic = log(
  ['model/route', { route: { provider: 'deepseek', model: 'deepseek-v4-pro' } }],
  ['turn/start', { turnId: 't1' }],
  ['user/message', { content: [{ type: 'text', text: 'Fix the build' }], source: 'user' }],
  ['request/context', { provider: 'deepseek', model: 'deepseek-v4-pro', contextWindow: 128_000 }],
  ['step/start', { turnId: 't1', step: 1 }],
  ['assistant/message', { content: [], usage: none, finish: 'error', error: serverError }],
  ['llm/retry', { attempt: 1, maxRetries: 4, code: 'SERVER', delayMs: 2000, reason: 'SERVER: retry 1 of 4' }],
  ['assistant/chunk', { kind: 'reasoning', text: 'Look at ' }],
  ['assistant/chunk', { kind: 'reasoning', text: 'the files.' }],
  [
    'assistant/message',
    {
      content: [
        { type: 'reasoning', text: 'Look at the files.' },
        { type: 'tool-call', callId: 'c1', name: 'read', arguments: {} },
      ],
      usage,
      finish: 'tool-calls',
    },
  ],
  ['tool/call', { callId: 'c1', name: 'read', arguments: { path: 'a.ts' } }],
  ['tool/call', { callId: 'c2', name: 'bash', arguments: { command: 'npm test' } }],
  ['tool/dispatched', { callId: 'c1' }],
  [
    'approval/asked',
    { requestId: 'r1', callId: 'c2', tool: 'bash', summary: 'bash: npm test', reason: 'runs a command' },
  ],
  ['fs/observed', { path: 'a.ts' }],
  ['tool/result', { callId: 'c1', content: [{ type: 'text', text: 'export const a = 1\n' }] }],
  ['approval/decided', { requestId: 'r1', answer: 'allow_once', by: 'user' }],
  ['tool/dispatched', { callId: 'c2' }],
  [
    'tool/result',
    {
      callId: 'c2',
      content: [{ type: 'text', text: 'FAIL a.test.ts' }],
      error: { code: 'EXIT_1', message: 'exit code 1' },
    },
  ],
  ['step/end', { turnId: 't1', step: 1, finish: 'tool-calls' }],
  ['step/start', { turnId: 't1', step: 2 }],
  ['assistant/chunk', { kind: 'text', text: 'The test ' }],
  ['assistant/chunk', { kind: 'text', text: 'fails.' }],
  ['assistant/message', { content: [{ type: 'text', text: 'The test fails.' }], usage, finish: 'stop' }],
  ['turn/end', { turnId: 't1', reason: 'completed' }],
  ['tool/pruned', { seq: 18, content: [{ type: 'text', text: 'FAIL …' }], note: 'old output' }],
  ['compaction/start', { trigger: 'threshold', fromSeq: 1, toSeq: 24, tokens: 9000, window: 10_000 }],
  [
    'user/message',
    {
      content: [{ type: 'text', text: 'Summary: the test fails.' }],
      source: 'summary',
      replaces: { fromSeq: 1, toSeq: 24 },
    },
  ],
  ['compaction/end', { ok: true, summarySeq: 27, requests: 1, usage }],
  ['someone/else', { x: 1 }],
  ['turn/start', { turnId: 't2' }],
  ['user/message', { content: [{ type: 'text', text: 'Try again' }], source: 'user' }],
  ['step/start', { turnId: 't2', step: 1 }],
  ['assistant/chunk', { kind: 'text', text: 'Let me' }],
  [
    'assistant/message',
    { content: [{ type: 'text', text: 'Let me' }], usage: none, finish: 'aborted', interrupted: true },
  ],
  ['turn/end', { turnId: 't2', reason: 'aborted' }],
  ['turn/start', { turnId: 't3' }],
  [
    'user/message',
    {
      content: [
        { type: 'text', text: 'Write it' },
        { type: 'image', mediaType: 'image/png', sha256: 'ab12' },
      ],
      source: 'user',
    },
  ],
  ['step/start', { turnId: 't3', step: 1 }],
  ['tool/call', { callId: 'c3', name: 'write', arguments: { path: 'b.ts', content: 'x' } }],
  // dsh stopped here; repair appended what follows.
  [
    'tool/result',
    {
      callId: 'c3',
      content: [{ type: 'text', text: 'never started' }],
      error: { code: 'TOOL_NOT_STARTED', message: 'never started' },
    },
  ],
  ['turn/end', { turnId: 't3', reason: 'interrupted' }],
)

/** What a surface that only reads change reports would show: the changes replayed onto a keyed list. */
function replay(changes: ViewChange[]): Item[] {
  const shown: Item[] = []
  for (const change of changes) {
    if (change.op === 'added') shown.push(change.item)
    else if (change.op === 'updated') shown[shown.findIndex((item) => item === change.previous)] = change.item
    else if (change.op === 'removed') shown.splice(shown.indexOf(change.item), 1)
  }
  return shown
}

test('a realistic log folded at once and event by event gives the same view, and its changes rebuild it', () => {
  const whole = SessionView.fold(realistic)
  const live = new SessionView()
  const changes = realistic.flatMap((event) => live.apply(event))
  expect(live.items).toEqual(whole.items)
  expect(replay(changes)).toEqual(whole.items)
  expect(live.pendingApprovals).toEqual([])
  expect([live.openTurn, live.window, live.route]).toEqual([
    false,
    128_000,
    { provider: 'deepseek', model: 'deepseek-v4-pro' },
  ])
  expect(whole.applied).toBe(realistic.length)
  expect(Object.fromEntries(whole.skipped)).toEqual({ 'someone/else': 1 })
  expect(whole.items.map((item) => item.key)).toEqual([
    'n0',
    'u2',
    'n6',
    'a7',
    'tc1',
    'tc2',
    'a21',
    'e24',
    'n27',
    'u31',
    'a33',
    'e35',
    'u37',
    'tc3',
    'e41',
  ])
})

test('the view shows the retry instead of the error it recovered from, the approval on its call, and the pruned note', () => {
  const view = SessionView.fold(realistic)
  expect(view.get('n6')).toMatchObject({
    kind: 'notice',
    cause: 'retry',
    tone: 'muted',
    text: 'Model request failed (SERVER); retrying in 2 s — retry 1 of 4',
    retry: { attempt: 1, maxRetries: 4, code: 'SERVER', delayMs: 2000, failure: serverError },
  })
  expect(view.get('a7')).toMatchObject({ reasoning: 'Look at the files.', text: '', streaming: false })
  expect(view.get('tc1')).toMatchObject({
    status: 'done',
    output: 'export const a = 1\n',
    startedAt: 1010,
    endedAt: 1015,
  })
  expect(view.get('tc2')).toMatchObject({
    status: 'error',
    error: { code: 'EXIT_1' },
    approval: { requestId: 'r1', decided: { answer: 'allow_once', by: 'user' } },
    pruned: { seq: 25, note: 'old output' },
    version: 25,
  })
  expect(view.get('e24')).toMatchObject({
    reason: 'completed',
    usage: { input: 200, output: 40, cacheRead: 100, cacheWrite: 0 },
    startedAt: 1001,
    endedAt: 1024,
  })
  expect(view.get('n27')).toMatchObject({ cause: 'summary', replaces: { fromSeq: 1, toSeq: 24 } })
})

test('a turn that ends while an answer streams, its message never logged, leaves the answer interrupted, not streaming', () => {
  const view = SessionView.fold(
    log(
      ['turn/start', { turnId: 't' }],
      ['assistant/chunk', { kind: 'text', text: 'Half' }],
      ['turn/end', { turnId: 't', reason: 'error', error: serverError }],
    ),
  )
  expect(view.items).toEqual([
    expect.objectContaining({ kind: 'assistant', text: 'Half', streaming: false, interrupted: true, version: 2 }),
    expect.objectContaining({ kind: 'turn-end', error: serverError, loggedError: serverError }),
  ])
})

test('a cancelled answer stops streaming, and a repaired turn shows its unstarted call and its interrupted end', () => {
  const view = SessionView.fold(realistic)
  expect(view.get('a33')).toMatchObject({ text: 'Let me', streaming: false, interrupted: true })
  expect(view.get('e35')).toMatchObject({ reason: 'aborted' })
  expect(view.get('u37')).toMatchObject({ text: 'Write it', images: [{ mediaType: 'image/png', sha256: 'ab12' }] })
  expect(view.get('tc3')).toMatchObject({ status: 'interrupted', error: { code: 'TOOL_NOT_STARTED' } })
  expect(view.get('e41')).toMatchObject({ reason: 'interrupted' })
})

test('each event reports exactly what it changed', () => {
  const view = new SessionView()
  const ops = realistic.map((event) =>
    view
      .apply(event)
      .map((change) =>
        change.op === 'usage' || change.op === 'session' ? change.op : `${change.op} ${change.item.key}`,
      ),
  )
  expect(ops[5]).toEqual(['added a5', 'usage', 'session']) // the failed request, then what it used
  expect(ops[6]).toEqual(['removed a5', 'added n6']) // its retry replaces it
  expect(ops[8]).toEqual(['updated a7'])
  expect(ops[9]).toEqual(['updated a7', 'usage', 'session'])
  expect(ops[13]).toEqual(['updated tc2']) // the approval joins its call
  expect(ops[14]).toEqual([]) // fs/observed shows nothing
  expect(ops[29]).toEqual([]) // an unknown kind, counted
  expect(ops[34]).toEqual(['updated a33', 'usage', 'session'])
  expect(ops[35]).toEqual(['session', 'added e35'])
})

test('streamed chunks report their deltas, which add up to the answer', () => {
  const view = new SessionView()
  const deltas = realistic
    .slice(0, 24)
    .flatMap((event) => view.apply(event))
    .flatMap((change) => ('delta' in change && change.delta ? [change.delta] : []))
  expect(deltas).toEqual([
    { kind: 'reasoning', text: 'Look at ' },
    { kind: 'reasoning', text: 'the files.' },
    { kind: 'text', text: 'The test ' },
    { kind: 'text', text: 'fails.' },
  ])
})

test('a change never alters an item already reported: rows holding the old object still see the old content', () => {
  const view = new SessionView()
  const events = realistic.slice(0, 9)
  events.slice(0, 8).forEach((event) => view.apply(event))
  const before = view.get('a7')!
  const [change] = view.apply(events[8]!)
  expect(change).toMatchObject({ op: 'updated', previous: before })
  expect(before).toMatchObject({ reasoning: 'Look at ', version: 7 })
  expect(view.get('a7')).toMatchObject({ reasoning: 'Look at the files.', version: 8 })
})

test('an approval still waiting is pending; one without a call shows as its own card', () => {
  const view = SessionView.fold(
    log(['approval/asked', { requestId: 'r', tool: 'web', summary: 'fetch x', reason: 'network' }]),
  )
  expect(view.pendingApprovals).toEqual([{ requestId: 'r', tool: 'web', summary: 'fetch x', reason: 'network' }])
  expect(view.items).toEqual([expect.objectContaining({ kind: 'approval', key: 'pr' })])
})

test('a failed compaction leaves a warning; the summary of a successful one is its only trace', () => {
  const view = SessionView.fold(
    log(
      ['compaction/start', { fromSeq: 0, toSeq: 5 }],
      ['compaction/end', { ok: false, code: 'SUMMARY_FAILED', reason: 'the model refused', requests: 1, usage: none }],
    ),
  )
  expect(view.items).toEqual([
    expect.objectContaining({
      kind: 'notice',
      tone: 'warn',
      cause: 'compaction',
      text: 'Compaction failed (SUMMARY_FAILED): the model refused; the conversation is kept as it was.',
    }),
  ])
})

test('a skills catalog shows the skills offered, and a warning naming each SKILL.md left out', () => {
  const skill = (name: string) => ({
    name,
    description: `${name} things`,
    file: `/w/.dsh/skills/${name}/SKILL.md`,
    scope: 'workspace',
  })
  const view = SessionView.fold(
    log(
      [
        'skill/catalog',
        { skills: [skill('one'), skill('two')], problems: [], content: [{ type: 'text', text: 'catalog' }] },
      ],
      [
        'skill/catalog',
        {
          skills: [skill('one')],
          problems: [{ file: '/w/.dsh/skills/Two/SKILL.md', field: 'name', message: 'must be lower case' }],
          content: [],
        },
      ],
    ),
  )
  expect(view.items).toEqual([
    expect.objectContaining({ kind: 'notice', tone: 'info', cause: 'skills', text: 'Skills: one, two' }),
    expect.objectContaining({
      kind: 'notice',
      tone: 'warn',
      cause: 'skills',
      text: 'Skills: one. Left out: /w/.dsh/skills/Two/SKILL.md: name must be lower case',
    }),
  ])
})

test('a call id the model repeats gets a card of its own, and the later result and approval go to the later call', () => {
  const view = SessionView.fold(
    log(
      ['tool/call', { callId: 'x', name: 'read', arguments: { path: 'a' } }],
      ['tool/result', { callId: 'x', content: [{ type: 'text', text: 'first' }] }],
      ['tool/call', { callId: 'x', name: 'bash', arguments: { command: 'rm -rf /' } }],
      [
        'approval/asked',
        { requestId: 'r', callId: 'x', tool: 'bash', summary: 'bash: rm -rf /', reason: 'destructive' },
      ],
      ['approval/decided', { requestId: 'r', answer: 'reject', by: 'user' }],
      ['tool/result', { callId: 'x', content: [], error: { code: 'DENIED', message: 'rejected' } }],
    ),
  )
  expect(
    view.items.map((item) => [
      item.key,
      item.kind === 'tool' && [item.name, item.status, item.approval?.decided?.answer],
    ]),
  ).toEqual([
    ['tx', ['read', 'done', undefined]],
    ['tx@2', ['bash', 'error', 'reject']],
  ])
  expect(new Set(view.items.map((item) => item.key)).size).toBe(view.items.length)
})

test('a call id chosen to look like a renamed repeat still gets a key of its own', () => {
  const view = SessionView.fold(
    log(
      ['tool/call', { callId: 'x@1', name: 'read', arguments: {} }],
      ['tool/call', { callId: 'x', name: 'read', arguments: {} }],
      ['tool/call', { callId: 'x', name: 'bash', arguments: {} }],
    ),
  )
  expect(view.items.map((item) => item.key)).toEqual(['tx@1', 'tx', 'tx@2'])
  const tricky = SessionView.fold(
    log(
      ['tool/call', { callId: 'x', name: 'read', arguments: {} }],
      ['tool/call', { callId: 'x@2', name: 'read', arguments: {} }],
      ['tool/call', { callId: 'x', name: 'bash', arguments: {} }],
    ),
  )
  expect(tricky.items.map((item) => item.key)).toEqual(['tx', 'tx@2', 'tx@2.1'])
})

test('hooks: a rewritten call shows what ran, a block is a warning, context and passing runs stay quiet', () => {
  const view = new SessionView()
  const run = (decision: string, reason?: string) =>
    ['hook/run', { event: 'PreToolUse', command: 'guard.sh', decision, ...(reason ? { reason } : {}) }] as [
      string,
      unknown,
    ]
  const events = log(
    ['tool/call', { callId: 'c1', name: 'bash', arguments: { command: 'echo original' } }],
    run('allow'),
    [
      'hook/updated-input',
      { callId: 'c1', arguments: { command: 'echo rewritten' }, file: '/home/me/.dsh/hooks.json' },
    ],
    run('block', 'rm is not allowed'),
    [
      'user/message',
      { content: [{ type: 'text', text: 'Context from a SessionStart hook:\nbranch main' }], source: 'hook' },
    ],
  )
  for (const event of events) view.apply(event)
  const items = view.items
  expect(items.find((item) => item.kind === 'tool')).toMatchObject({
    args: { command: 'echo rewritten' },
    editedBy: 'hook',
  })
  expect(items.filter((item) => item.kind === 'notice')).toEqual([
    expect.objectContaining({
      cause: 'hook',
      tone: 'warn',
      text: 'PreToolUse hook "guard.sh": block — rm is not allowed',
    }),
    expect.objectContaining({ cause: 'hook', tone: 'muted', text: 'Context from a SessionStart hook:\nbranch main' }),
  ])
  expect(items.some((item) => item.kind === 'user')).toBe(false)
  expect(view.skipped.size).toBe(0)
})

test("an approver's edit: the card shows the arguments that ran and that the approver edited them", () => {
  const view = SessionView.fold(
    log(
      [
        'tool/call',
        {
          callId: 'c1',
          name: 'str_replace_editor',
          arguments: { command: 'create', path: 'a.txt', file_text: 'model' },
        },
      ],
      ['tool/edited', { callId: 'c1', arguments: { command: 'create', path: 'b.txt', file_text: 'approver' } }],
    ),
  )
  expect(view.items[0]).toMatchObject({
    kind: 'tool',
    args: { path: 'b.txt' },
    editedBy: 'approver',
    change: { kind: 'write', path: 'b.txt', content: 'approver' },
  })
  expect(view.skipped.size).toBe(0)
})

test("a child agent is one card linking its session: running, then its end; a follow-up runs the same card again; the child's log names its parent", () => {
  const parent = SessionView.fold(
    log(
      ['turn/start', { turnId: 't1' }],
      ['tool/call', { callId: 'c1', name: 'task', arguments: { description: 'look around', prompt: 'look' } }],
      [
        'subagent/start',
        {
          childSessionId: 'kid',
          kind: 'spawn',
          agentType: 'explore',
          description: 'look around',
          ceiling: 'read-only',
          callId: 'c1',
        },
      ],
    ),
  )
  expect(parent.get('skid')).toMatchObject({
    kind: 'subagent',
    childSessionId: 'kid',
    status: 'running',
    agentType: 'explore',
    via: 'spawn',
    ceiling: 'read-only',
    callId: 'c1',
    turns: 1,
  })
  // One card per call: the `task` call that started the child is drawn by the child's card.
  expect(parent.get('tc1')).toMatchObject({ kind: 'tool', shownBy: 'skid' })
  const [ended] = parent.apply({
    type: 'subagent/end',
    seq: 3,
    time: 2000,
    data: { childSessionId: 'kid', status: 'failed', text: '', error: { code: 'SUBAGENT_FAILED', message: 'boom' } },
  })
  expect(ended).toMatchObject({
    op: 'updated',
    cause: 'subagent/end',
    item: { status: 'failed', error: { code: 'SUBAGENT_FAILED' }, endedAt: 2000 },
  })
  parent.apply({
    type: 'subagent/start',
    seq: 4,
    time: 3000,
    data: {
      childSessionId: 'kid',
      kind: 'spawn',
      agentType: 'explore',
      description: 'look around',
      ceiling: 'read-only',
      followup: true,
    },
  })
  expect(parent.items.filter((item) => item.kind === 'subagent')).toHaveLength(1)
  expect(parent.get('skid')).toMatchObject({ status: 'running', turns: 2 })
  // A follow-up's own call keeps its card where it was made: the child's card is further up.
  parent.apply({
    type: 'tool/call',
    seq: 5,
    time: 3000,
    data: { callId: 'c2', name: 'task', arguments: { description: 'again', prompt: 'more', session: 'kid' } },
  })
  parent.apply({
    type: 'subagent/start',
    seq: 6,
    time: 3000,
    data: {
      childSessionId: 'kid',
      kind: 'spawn',
      agentType: 'explore',
      description: 'look around',
      ceiling: 'read-only',
      callId: 'c2',
      followup: true,
    },
  })
  expect(parent.get('tc2')).not.toHaveProperty('shownBy')
  expect(parent.get('skid')).not.toHaveProperty('error', expect.anything())
  expect(parent.skipped.size).toBe(0)
  const child = SessionView.fold(
    log(
      [
        'subagent/parent',
        { parentSessionId: 'mum', kind: 'spawn', agentType: 'explore', description: 'look around', depth: 1 },
      ],
      ['sandbox/ceiling', { mode: 'read-only', why: 'subagent of session mum' }],
    ),
  )
  expect(child.items.map((item) => (item.kind === 'notice' ? item.text : item.kind))).toEqual([
    'Subagent "look around" (explore) of session mum',
    'Sandbox ceiling: read-only (subagent of session mum)',
  ])
})

test('the latest todo list replaces the one before, and each update is a session change', () => {
  const view = new SessionView()
  expect(view.todos).toBeUndefined()
  const first = view.apply({
    type: 'todo/updated',
    seq: 0,
    time: 1,
    data: { callId: 'c1', items: [{ content: 'read the tests', status: 'in_progress', priority: 'high' }] },
  })
  expect(first).toEqual([{ op: 'session', cause: 'todo/updated' }])
  view.apply({
    type: 'todo/updated',
    seq: 1,
    time: 2,
    data: {
      callId: 'c2',
      items: [
        { content: 'read the tests', status: 'completed', priority: 'high' },
        { content: 'fix the bug', status: 'pending', priority: 'medium' },
      ],
    },
  })
  expect(view.todos).toEqual([
    { content: 'read the tests', status: 'completed', priority: 'high' },
    { content: 'fix the bug', status: 'pending', priority: 'medium' },
  ])
  expect(view.skipped.size).toBe(0)
})

test('a background job shows when it ends or is lost, not when it starts (its bash card says so)', () => {
  const view = SessionView.fold(
    log(
      [
        'job/started',
        { jobId: 'job-1', callId: 'b', command: 'npm run dev', cwd: '/w', mode: 'workspace-write', pid: 7 },
      ],
      ['job/ended', { jobId: 'job-1', reason: 'exited', exitCode: 1, signal: null, outputChars: 10 }],
      ['job/ended', { jobId: 'job-2', reason: 'killed', exitCode: null, signal: 'SIGTERM', outputChars: 0 }],
      ['job/lost', { jobId: 'job-3' }],
    ),
  )
  expect(view.items.map((item) => item.kind === 'notice' && [item.text, item.tone, item.cause])).toEqual([
    ['Background job job-1 exited with code 1', 'warn', 'job'],
    ['Background job job-2 was stopped', 'info', 'job'],
    ['Background job job-3 was lost: dsh stopped while it ran', 'warn', 'job'],
  ])
  expect(view.skipped.size).toBe(0)
})

test('an agent preset is a notice naming it and sets agentPreset; a plan mode the user switched off says only that it ended', () => {
  const view = SessionView.fold([
    {
      type: 'agent/preset',
      seq: 0,
      time: 1,
      data: {
        name: 'explore',
        description: 'Read-only',
        tools: { allow: ['read'] },
        compaction: true,
        source: 'built-in',
        actor: 'user:web-tab',
      },
    },
    { type: 'plan/mode', seq: 1, time: 2, data: { active: true, actor: 'user:web-tab' } },
    { type: 'plan/mode', seq: 2, time: 3, data: { active: false, actor: 'user:web-tab' } },
  ] as any)
  expect(view.agentPreset).toBe('explore')
  expect(view.planMode).toBe(false)
  expect(view.items.map((item: any) => item.text)).toEqual([
    'Agent preset: explore (Read-only)',
    'Plan mode: only reading tools run until the plan is approved',
    'Plan mode ended',
  ])
})

test("a running command's card gathers what it printed, raw and plain, and keeps it when a crash cuts the call", () => {
  const view = SessionView.fold(
    log(
      ['turn/start', { turnId: 't' }],
      ['tool/call', { callId: 'c', name: 'bash', arguments: { command: 'make' } }],
      ['tool/dispatched', { callId: 'c' }],
      ['tool/output', { callId: 'c', index: 0, text: 'one\n' }],
      ['tool/output', { callId: 'c', index: 1, text: 'two\n', raw: '\x1b[31mtwo\x1b[0m\r\n' }],
      ['tool/output', { callId: 'other', index: 0, text: 'no card\n' }],
    ),
  )
  expect(view.get('tc')).toMatchObject({
    status: 'running',
    printed: { text: 'one\ntwo\n', raw: 'one\n\x1b[31mtwo\x1b[0m\r\n', capped: false },
    version: 4,
  })
  view.settle()
  expect(view.get('tc')).toMatchObject({ status: 'interrupted', printed: { text: 'one\ntwo\n' } })
})

test('the title is the latest user title, else the latest model title, and each change is a session change', () => {
  const view = new SessionView()
  expect(
    view.apply({ type: 'session/title', seq: 0, time: 1, data: { title: 'Flaky cache', source: 'model' } }),
  ).toEqual([{ op: 'session', cause: 'session/title' }])
  view.apply({ type: 'session/title', seq: 1, time: 2, data: { title: 'My name', source: 'user' } })
  expect(
    view.apply({ type: 'session/title', seq: 2, time: 3, data: { title: 'Late model idea', source: 'model' } }),
  ).toEqual([])
  expect(view.title).toEqual({ title: 'My name', source: 'user' })
})
