// The one protocol description: values checked against it name the field, and the files generated from it
// are fresh — the gate (scripts/gates/protocol-generated.mjs) is run here on a temp copy, edited by hand.
import { spawnSync } from 'node:child_process'
import { cpSync, mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, expect, test } from 'vitest'
import type { ToolOutputData as LoggedToolOutput } from '@dsh/tools'
import { CLIENT_METHOD_SCHEMAS, SERVER_REQUEST_SCHEMAS, checkValue, type ToolOutputData } from './index.ts'

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..')
const gate = join(repo, 'scripts/gates/protocol-generated.mjs')
const GENERATED = [
  'packages/sdk/sdk-protocol/protocol.schema.json',
  'python/sdk/dsh/protocol.py',
  'packages/host/web-protocol/web-protocol.schema.json',
  'docs/headless-lines.schema.json',
]

let copy: string | undefined
afterEach(() => {
  if (copy) rmSync(copy, { recursive: true, force: true })
  copy = undefined
})

function copyOfGenerated(): string {
  copy = mkdtempSync(join(tmpdir(), 'dsh-protocol-copy-'))
  for (const path of GENERATED) cpSync(join(repo, path), join(copy, path), { recursive: true })
  return copy
}

const runGate = (root: string) => spawnSync(process.execPath, [gate, '--root', root], { encoding: 'utf8' })

test('the checked-in generated files are what the declarations generate', () => {
  const result = runGate(copyOfGenerated())
  expect(result.stderr).toBe('')
  expect(result.status).toBe(0)
})

test('a hand edit of a generated file fails the gate, naming the file', () => {
  const root = copyOfGenerated()
  const file = join(root, 'python/sdk/dsh/protocol.py')
  const text = readFileSync(file, 'utf8')
  expect(text).toContain('APPROVAL_ANSWERS = (')
  writeFileSync(file, text.replace('APPROVAL_ANSWERS = (', 'APPROVAL_ANSWERS = ("allow_everything", '))
  const result = runGate(root)
  expect(result.status).toBe(1)
  expect(result.stderr).toContain('python/sdk/dsh/protocol.py differs')
  expect(result.stderr).toContain('npm run generate:protocol')
})

test('a missing generated file fails the gate', () => {
  const root = copyOfGenerated()
  rmSync(join(root, 'packages/sdk/sdk-protocol/protocol.schema.json'))
  const result = runGate(root)
  expect(result.status).toBe(1)
  expect(result.stderr).toContain('protocol.schema.json is missing')
})

test('a value is checked against its schema and the problem names the deepest field that is wrong', () => {
  const prompt = CLIENT_METHOD_SCHEMAS['session/prompt'].params
  expect(checkValue(prompt, { content: 'hi' })).toBeUndefined()
  expect(
    checkValue(prompt, {
      content: [
        { type: 'text', text: 'a' },
        { type: 'text', text: 42 },
      ],
    }),
  ).toEqual({ field: 'content[1].text', problem: 'must be string' })
  expect(checkValue(prompt, { content: [{ type: 'audio' }] })).toEqual({
    field: 'content[0].type',
    problem: 'must be "text" or "image"',
  })
  expect(checkValue(prompt, {})).toEqual({ field: 'content', problem: 'is required' })
  expect(
    checkValue(CLIENT_METHOD_SCHEMAS['session/new'].params, { route: { provider: 'p', model: 'm', effort: 'huge' } }),
  ).toEqual({
    field: 'route.effort',
    problem: 'must be one of "off", "low", "high", "max"',
  })
  expect(checkValue(CLIENT_METHOD_SCHEMAS.shutdown.params, { now: true })).toEqual({
    field: 'now',
    problem: 'is not a known field here',
  })
})

test('an approval answer outside the protocol is refused', () => {
  const answer = SERVER_REQUEST_SCHEMAS['approval/request'].result
  expect(checkValue(answer, { answer: 'allow_once' })).toBeUndefined()
  expect(checkValue(answer, { answer: 'allow_forever' })?.field).toBe('answer')
  expect(checkValue(answer, null)?.field).toBe('')
})

test('the wire form of tool/output is the type @dsh/tools logs (a drift is a type error in the test type check)', () => {
  const agree: [LoggedToolOutput] extends [ToolOutputData]
    ? [ToolOutputData] extends [LoggedToolOutput]
      ? true
      : false
    : false = true
  expect(agree).toBe(true)
})
