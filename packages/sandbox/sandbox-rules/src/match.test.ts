import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { coveringRule, expandRule, ruleBase, ruleProblem } from './index.ts'

let base: string
beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-rules-')))
})
afterEach(() => rmSync(base, { recursive: true, force: true }))

const rule = (pattern: string) => ({ rule: pattern, pattern })

test('a rule covers what it matches and everything beneath, with or without a trailing /**', () => {
  for (const pattern of ['/home/u/.ssh', '/home/u/.ssh/**']) {
    expect(coveringRule([rule(pattern)], '/home/u/.ssh')?.pattern).toBe(pattern)
    expect(coveringRule([rule(pattern)], '/home/u/.ssh/keys/id_rsa')?.pattern).toBe(pattern)
    expect(coveringRule([rule(pattern)], '/home/u/.sshx')).toBeUndefined()
    expect(coveringRule([rule(pattern)], '/home/u')).toBeUndefined()
  }
  expect(coveringRule([rule('/ws/certs/*.pem')], '/ws/certs/a.pem')).toBeDefined()
  expect(coveringRule([rule('/ws/certs/*.pem')], '/ws/certs/README')).toBeUndefined()
  expect(coveringRule([rule('/ws/{.git,.hg}')], '/ws/.hg/hgrc')).toBeDefined()
  expect(coveringRule([rule('/ws/.git')], '/ws/src/../.git/config')).toBeDefined()
})

test('a rule that cannot be applied says why', () => {
  expect(ruleProblem('relative/path')).toMatch(/not an absolute path/)
  expect(ruleProblem('/ws/**/.env')).toMatch(/"\*\*" may only end a rule/)
  expect(ruleProblem('/**')).toMatch(/whole file system/)
  expect(ruleProblem('/ws/.git/**')).toBeUndefined()
  expect(ruleBase('/ws/.git/**')).toBe('/ws/.git')
})

test('expansion names what exists now as real paths, and a missing literal as missing', () => {
  mkdirSync(join(base, 'certs'))
  writeFileSync(join(base, 'certs/a.pem'), '')
  writeFileSync(join(base, 'certs/b.pem'), '')
  writeFileSync(join(base, 'certs/README'), '')
  mkdirSync(join(base, 'real-ssh'))
  symlinkSync(join(base, 'real-ssh'), join(base, '.ssh'))
  expect(expandRule(join(base, 'certs/*.pem'), 10).found.sort()).toEqual([
    join(base, 'certs/a.pem'),
    join(base, 'certs/b.pem'),
  ])
  expect(expandRule(join(base, 'certs/*.pem'), 1).found).toHaveLength(1)
  expect(expandRule(join(base, '.ssh/**'), 10)).toEqual({ found: [join(base, 'real-ssh')] })
  expect(expandRule(join(base, '.dsh'), 10)).toEqual({ found: [], missing: join(base, '.dsh') })
  expect(expandRule(join(base, 'nothing/*.key'), 10)).toEqual({ found: [] })
})
