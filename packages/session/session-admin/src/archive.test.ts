import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { create } from 'tar'
import { afterAll, beforeAll, expect, test } from 'vitest'
import type {} from '@dsh/llm-scripted'
import type {} from '@dsh/spill'
import { bootComposition, scriptedPatch, toolCall, type Harness } from '@dsh/test-harness'
import { outsideDir, tempDir } from '@dsh/test-harness/world'
import type {} from './index.ts'

// Export in one home, import into another: real jsonl stores, spills, the `task` subagent tool and tar files
// on disk. Only the model is scripted. The second home has small archive limits.
let from: Harness
let into: Harness
let exported: string
let exportDir: string
let parentId: string
let childId: string
const LIMITS = '- id: session-admin\n  config: { maxUnpackedBytes: 200000, maxEntries: 50 }\n'

beforeAll(async () => {
  from = await bootComposition({ patch: scriptedPatch() })
  into = await bootComposition({ workspace: from.workspace, patch: scriptedPatch({}, LIMITS) })
  const parent = await from.root.agents.create({ cwd: from.workspace })
  from.root.scriptedLlm.enqueue(
    toolCall('t1', 'task', { description: 'look', prompt: 'say hi' }),
    { text: 'hi from the child' },
    { text: 'the child said hi' },
  )
  parent.followup('delegate the greeting')
  await parent.whenIdle()
  parentId = parent.session.id
  childId = (
    parent.session.events.find((event) => (event.type as string) === 'subagent/start')!.data as {
      childSessionId: string
    }
  ).childSessionId
  await from.root.spillStore.write({ sessionId: parentId, callId: 'c9', tool: 'bash', text: 'the whole long output' })
  exportDir = mkdtempSync(join(tmpdir(), 'dsh-export-'))
  exported = join(exportDir, 'greeting.tar.gz')
  await from.root.sessionAdmin.exportArchive(parentId, exported)
})
afterAll(async () => {
  await from?.dispose()
  await into?.dispose()
  if (exportDir) rmSync(exportDir, { recursive: true, force: true })
})

const storedIds = (h: Harness) => h.root.sessions.list().then((list) => list.map((summary) => summary.id).sort())

/** One tar entry (ustar), so a test can write what no honest packer would. */
function entry(
  name: string,
  options: { type?: '0' | '1' | '2' | '5'; body?: string; link?: string; size?: number } = {},
): Buffer {
  const body = Buffer.from(options.body ?? '')
  const header = Buffer.alloc(512)
  const put = (text: string, at: number, length: number) => header.write(text.slice(0, length), at, 'utf8')
  const octal = (value: number, length: number) => value.toString(8).padStart(length - 1, '0') + '\0'
  put(name, 0, 100)
  put(octal(0o644, 8), 100, 8)
  put(octal(0, 8), 108, 8)
  put(octal(0, 8), 116, 8)
  put(octal(options.size ?? body.length, 12), 124, 12)
  put(octal(0, 12), 136, 12)
  header.fill(' ', 148, 156)
  put(options.type ?? '0', 156, 1)
  put(options.link ?? '', 157, 100)
  put('ustar\u000000', 257, 8)
  let sum = 0
  for (const byte of header) sum += byte
  put(octal(sum, 7) + ' ', 148, 8)
  const padded = Buffer.alloc(Math.ceil(body.length / 512) * 512)
  body.copy(padded)
  return Buffer.concat([header, padded])
}

function archiveOf(entries: Buffer[]): string {
  const file = join(tempDir('dsh-crafted-'), 'crafted.tar.gz')
  writeFileSync(file, gzipSync(Buffer.concat([...entries, Buffer.alloc(1024)])))
  return file
}

const manifest = (ids: string[]) =>
  JSON.stringify({ format: 'dsh-session-export', version: 1, session: ids[0], sessions: ids })

test('an export imported into another home shows, resumes and replays, with its child and its spilled output', async () => {
  const before = await from.root.sessions.read(parentId)
  const result = await into.root.sessionAdmin.importArchive(exported)
  expect(result).toMatchObject({ session: parentId, sessions: [parentId, childId] })

  expect(await storedIds(into)).toEqual([parentId, childId].sort())
  // The exported log, then only this home's authority (import-authority.ts): nothing of the old one is lost.
  const imported = (await into.root.sessions.read(parentId)).events
  expect(imported.slice(0, before.events.length)).toEqual(before.events)
  expect(
    imported.slice(before.events.length).map((event) => [event.type, (event.data as { actor?: string }).actor]),
  ).toEqual([
    ['permission/preset', 'default'],
    ['sandbox/mode', 'default'],
    ['approval/policy', 'default'],
  ])
  expect(
    (await into.root.sessions.read(childId)).events.some((event) => (event.type as string) === 'subagent/parent'),
  ).toBe(true)
  expect(readFileSync(join(into.root.spillStore.readableDir(parentId)!, 'c9.txt'), 'utf8')).toBe(
    'the whole long output',
  )
  expect(into.root.spillStore.readableDir(parentId)!.startsWith(into.home)).toBe(true)

  const resumed = await into.root.agents.resume(parentId)
  into.root.scriptedLlm.enqueue({ text: 'still here in the new home' })
  resumed.followup('are you there?')
  await resumed.whenIdle()
  expect(resumed.session.last('turn/end')?.data.reason).toBe('completed')
  // The resumed request carries the imported conversation: the log is the history.
  expect(JSON.stringify(into.root.scriptedLlm.requests.at(-1)!.messages)).toContain('the child said hi')
  await resumed.dispose()
})

test('importing a session id that this home already stores is refused and changes nothing', async () => {
  const folder = await into.root.sessionPersistence.folderOf(parentId)
  const log = readFileSync(join(folder, 'session.jsonl'), 'utf8')
  await expect(into.root.sessionAdmin.importArchive(exported)).rejects.toMatchObject({ code: 'SESSION_EXISTS' })
  expect(readFileSync(join(folder, 'session.jsonl'), 'utf8')).toBe(log)
  expect(readdirSync(into.home).filter((name) => name.startsWith('.import-'))).toEqual([])
})

test('entries that escape the target, links of either kind and absolute paths write nothing anywhere', async () => {
  const outside = outsideDir()
  const decoy = join(outside, 'decoy.txt')
  writeFileSync(decoy, 'original')
  const id = 'abc-123'
  const log = `${JSON.stringify({ format: 'dsh-session', version: 1, id, cwd: from.workspace, createdAt: 1 })}\n`
  const attacks: Buffer[][] = [
    [
      entry('dsh-export.json', { body: manifest([id]) }),
      entry(`sessions/${id}/session.jsonl`, { body: log }),
      entry(`sessions/${id}/../../../../${outside.slice(1)}/decoy.txt`, { body: 'pwned' }),
    ],
    [entry('dsh-export.json', { body: manifest([id]) }), entry(`${decoy}`, { body: 'pwned' })],
    [
      entry('dsh-export.json', { body: manifest([id]) }),
      entry(`sessions/${id}`, { type: '2', link: outside }),
      entry(`sessions/${id}/decoy.txt`, { body: 'pwned' }),
    ],
    [
      entry('dsh-export.json', { body: manifest([id]) }),
      entry(`sessions/${id}/session.jsonl`, { type: '1', link: decoy }),
    ],
    [entry('dsh-export.json', { body: manifest([id]) }), entry(`spill/${id}/x.txt`, { type: '2', link: decoy })],
    [entry('dsh-export.json', { body: manifest([id]) }), entry('elsewhere/file.txt', { body: 'pwned' })],
  ]
  for (const entries of attacks) {
    await expect(into.root.sessionAdmin.importArchive(archiveOf(entries))).rejects.toMatchObject({
      code: 'ARCHIVE_INVALID',
      message: expect.stringContaining('nothing was imported'),
    })
  }
  expect(readFileSync(decoy, 'utf8')).toBe('original')
  expect(readdirSync(outside)).toEqual(['decoy.txt'])
  expect(await storedIds(into)).not.toContain(id)
  expect(readdirSync(into.home).filter((name) => name.startsWith('.import-') || name === 'elsewhere')).toEqual([])
})

test('an archive whose log is damaged is refused naming the entry and line, and leaves no session behind', async () => {
  const staging = tempDir('dsh-damaged-')
  const id = 'damaged-1'
  const header = { format: 'dsh-session', version: 1, id, cwd: from.workspace, createdAt: 1 }
  const events = [
    { type: 'turn/start', seq: 0, time: 1, data: { turnId: 't' } },
    { type: 'user/message', seq: 1, time: 1, data: { content: 'not a list of blocks', source: 'user' } },
  ]
  mkdirSync(join(staging, 'sessions', id), { recursive: true })
  writeFileSync(join(staging, 'dsh-export.json'), manifest([id]))
  writeFileSync(
    join(staging, 'sessions', id, 'session.jsonl'),
    [header, ...events].map((line) => JSON.stringify(line)).join('\n') + '\n',
  )
  const file = join(staging, 'damaged.tar.gz')
  await create({ gzip: true, file, cwd: staging }, ['dsh-export.json', 'sessions'])

  await expect(into.root.sessionAdmin.importArchive(file)).rejects.toMatchObject({
    code: 'ARCHIVE_INVALID',
    message: expect.stringContaining(`${file}: sessions/${id}/session.jsonl:3: session ${id}: event 1`),
  })
  expect(await storedIds(into)).not.toContain(id)
})

test('an archive that would unpack past the limits is refused before anything is written', async () => {
  const id = 'big-1'
  const bomb = archiveOf([
    entry('dsh-export.json', { body: manifest([id]) }),
    entry(`sessions/${id}/session.jsonl`, { body: 'x'.repeat(300_000) }),
  ])
  await expect(into.root.sessionAdmin.importArchive(bomb)).rejects.toMatchObject({
    code: 'ARCHIVE_TOO_LARGE',
    message: expect.stringContaining('more than 200000 bytes'),
  })
  const many = archiveOf([
    entry('dsh-export.json', { body: manifest([id]) }),
    ...Array.from({ length: 60 }, (_, i) => entry(`sessions/${id}/f${i}.txt`, { body: 'x' })),
  ])
  await expect(into.root.sessionAdmin.importArchive(many)).rejects.toMatchObject({
    code: 'ARCHIVE_TOO_LARGE',
    message: expect.stringContaining('more than 50 entries'),
  })
  expect(await storedIds(into)).not.toContain(id)
})

test("an imported file gets the stores' owner-only modes, whatever mode the archive gave it", async () => {
  const id = 'modes-1'
  const log = `${JSON.stringify({ format: 'dsh-session', version: 1, id, cwd: from.workspace, createdAt: 1 })}\n`
  await into.root.sessionAdmin.importArchive(
    archiveOf([
      entry('dsh-export.json', { body: manifest([id]) }),
      entry(`sessions/${id}/session.jsonl`, { body: log }),
    ]),
  )
  const folder = await into.root.sessionPersistence.folderOf(id)
  expect([statSync(folder).mode & 0o777, statSync(join(folder, 'session.jsonl')).mode & 0o777]).toEqual([0o700, 0o600])
})

test("authority does not travel: an imported session runs at this home's default preset, without the session grants it was given elsewhere", async () => {
  const wide = await from.root.agents.create({ cwd: from.workspace })
  from.root.permissionPresets.set(wide.session, 'danger-full-access', 'user:cli-flag')
  await from.root.grants.add(wide.session, { rule: 'bash(curl *)', scope: 'session', actor: 'user:web-tab' })
  await wide.session.flush()
  expect(from.root.sandboxPolicy.mode(wide.session)).toBe('danger-full-access')
  const file = join(exportDir, 'wide.tar.gz')
  await from.root.sessionAdmin.exportArchive(wide.session.id, file)
  await into.root.sessionAdmin.importArchive(file)

  const session = await into.root.sessions.resume(wide.session.id)
  try {
    const home = into.root.permissionPresets.config.default
    expect(home).not.toBe('danger-full-access')
    expect(into.root.sandboxPolicy.mode(session)).toBe(into.root.permissionPresets.get(home).mode)
    expect(into.root.approval.policy(session)).toBe(into.root.permissionPresets.get(home).approval)
    expect(into.root.grants.sessionGrants(session)).toEqual([])
    expect(session.last('permission/preset')?.data).toMatchObject({ preset: home, actor: 'default' })
    expect(session.all('grant/revoked').map((event) => [event.data.rule, event.data.actor])).toEqual([
      ['bash(curl *)', 'default'],
    ])
  } finally {
    await into.root.sessions.close(wide.session.id)
  }
})

test('an archive whose session works in a folder other than the one the import runs from is refused: its workspace is where a resume may write', async () => {
  // An archive someone sent names the workspace: ~/.config/autostart or / would become a writable root here.
  const elsewhere = tempDir('dsh-elsewhere-')
  const agent = await from.root.agents.create({ cwd: elsewhere })
  await agent.session.flush()
  const file = join(exportDir, 'elsewhere.tar.gz')
  await from.root.sessionAdmin.exportArchive(agent.session.id, file)
  await expect(into.root.sessionAdmin.importArchive(file)).rejects.toMatchObject({
    code: 'ARCHIVE_WORKSPACE',
    message: expect.stringContaining(`works in ${realpathSync(elsewhere)}; run the import from that folder`),
  })
  expect(await storedIds(into)).not.toContain(agent.session.id)
})
