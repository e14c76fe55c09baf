import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import { startAgent, type AgentProcess } from '@dsh/acp/test-support'

// An editor that offers its file system: the agent's text reads and writes go through it (bundle-acp mounts
// @dsh/fs-acp as the fs row), still behind the write fence.
let llm: MockServer
let editor: AgentProcess
let outside: string

beforeAll(async () => {
  llm = await startMockServer()
  outside = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-acp-outside-')))
  editor = await startAgent({
    patch: '[]',
    env: { DEEPSEEK_BASE_URL: llm.url, DEEPSEEK_API_KEY: 'test-key-0123456789' },
    capabilities: { fs: { readTextFile: true, writeTextFile: true } },
    workspaceFiles: { 'notes.md': 'saved on disk\n' },
  })
})
afterAll(async () => {
  await editor?.dispose()
  await llm?.close()
  rmSync(outside, { recursive: true, force: true })
})
afterEach(() => llm.reset())

const call = (id: string, name: string, args: Record<string, unknown>) => ({
  toolCalls: [{ id, name, arguments: args }],
})
const newSession = async () =>
  (await editor.agent.request('session/new', { cwd: editor.workspace, mcpServers: [] })).sessionId
const prompt = (sessionId: string, text: string) =>
  editor.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] })
const lastToolMessage = (index: number) => JSON.stringify(llm.requests[index]!.body.messages.at(-1))

test('a read goes through the editor and sees its unsaved buffer', async () => {
  const file = join(editor.workspace, 'notes.md')
  editor.buffers.set(file, 'unsaved edit in the editor\n')
  const sessionId = await newSession()
  llm.enqueue(call('r1', 'read', { path: 'notes.md' }), { text: 'read it' })
  await prompt(sessionId, 'read my notes')
  expect(editor.fsReads.map((read) => read.path)).toContain(file)
  expect(lastToolMessage(1)).toContain('unsaved edit in the editor')
  expect(lastToolMessage(1)).not.toContain('saved on disk')
})

test('a write goes to the editor, not around it to the disk', async () => {
  const file = join(editor.workspace, 'draft.md')
  const sessionId = await newSession()
  llm.enqueue(call('w1', 'write', { path: 'draft.md', content: '# Draft\n' }), { text: 'written' })
  await prompt(sessionId, 'write a draft')
  expect(editor.fsWrites).toContainEqual({ path: file, content: '# Draft\n' })
  // The test editor keeps the change in its buffer (saving is its own business): the disk has no file.
  expect(existsSync(file)).toBe(false)
})

test("an edit is made on the editor's text and sent back to the editor whole", async () => {
  const file = join(editor.workspace, 'notes.md')
  editor.buffers.set(file, 'one\ntwo\nthree\n')
  const sessionId = await newSession()
  llm.enqueue(
    call('r2', 'read', { path: 'notes.md' }),
    call('e2', 'edit', { path: 'notes.md', old_string: 'two', new_string: 'TWO' }),
    { text: 'edited' },
  )
  await prompt(sessionId, 'shout two')
  expect(editor.fsWrites.at(-1)).toEqual({ path: file, content: 'one\nTWO\nthree\n' })
  expect(readFileSync(file, 'utf8')).toBe('saved on disk\n')
})

test('a write outside the workspace is fenced before the editor is asked', async () => {
  const target = join(outside, 'escape.txt')
  const sessionId = await newSession()
  const writesBefore = editor.fsWrites.length
  llm.enqueue(call('w3', 'write', { path: target, content: 'pwned' }), { text: 'refused' })
  await prompt(sessionId, 'write outside')
  expect(editor.fsWrites).toHaveLength(writesBefore)
  expect(existsSync(target)).toBe(false)
  expect(lastToolMessage(1)).toContain('outside the writable roots')
})

test('a secret path is refused before the editor is asked, even when the editor holds it in a buffer', async () => {
  const credentials = join(editor.home, '.credentials.yaml')
  writeFileSync(credentials, 'DEEPSEEK_API_KEY: SECRET-ON-DISK\n')
  editor.buffers.set(credentials, 'DEEPSEEK_API_KEY: SECRET-IN-BUFFER\n')
  const sessionId = await newSession()
  llm.enqueue(call('r4', 'read', { path: credentials }), { text: 'refused' })
  await prompt(sessionId, 'read the credentials')
  expect(editor.fsReads.map((read) => read.path)).not.toContain(credentials)
  expect(lastToolMessage(1)).toContain('is a secret path (rule $DSH_HOME)')
  expect(JSON.stringify(llm.requests.map((request) => request.body))).not.toMatch(/SECRET-(ON-DISK|IN-BUFFER)/)
})

test('a write of a protected path is not sent to the editor unless approved (the agent asks; unanswered, nothing is written)', async () => {
  const sessionId = await newSession()
  const writesBefore = editor.fsWrites.length
  llm.enqueue(
    call('w5', 'write', { path: '.vscode/tasks.json', content: '{"tasks":[{"runOptions":{"runOn":"folderOpen"}}]}' }),
    { text: 'refused' },
  )
  await prompt(sessionId, 'add a task')
  expect(editor.fsWrites).toHaveLength(writesBefore)
  expect(lastToolMessage(1)).toContain('a protected path (rule .vscode/)')
  expect(existsSync(join(editor.workspace, '.vscode/tasks.json'))).toBe(false)
})
