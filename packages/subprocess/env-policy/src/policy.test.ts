import { expect, test } from 'vitest'
import { checkEnvPolicy, EMPTY_POLICY, isSecretName, nameMatcher, scrubEnvironment } from './index.ts'

const source = {
  PATH: '/usr/bin',
  HOME: '/home/u',
  LANG: 'C.UTF-8',
  LC_ALL: 'C',
  TERM: 'xterm',
  DEEPSEEK_API_KEY: 'sk-0123456789',
  GITHUB_TOKEN: 'ghp_0123456789',
  my_secret: 'lower-case-secret',
  SSH_AUTH_SOCK: '/tmp/ssh-agent.sock',
  DB_PASSWORD: 'hunter2hunter2',
  AWS_SHARED_CREDENTIALS_FILE: '/home/u/.aws/c',
  NODE_ENV: 'test',
  EDITOR: 'vim',
}

test('by default only the allow-list is inherited; every other name, secret or not, stays behind', () => {
  const { env, inherited, dropped } = scrubEnvironment(source, EMPTY_POLICY)
  expect(env).toEqual({ PATH: '/usr/bin', HOME: '/home/u', LANG: 'C.UTF-8', LC_ALL: 'C', TERM: 'xterm' })
  expect(inherited).toEqual(['HOME', 'LANG', 'LC_ALL', 'PATH', 'TERM'])
  expect(dropped).toEqual([
    'AWS_SHARED_CREDENTIALS_FILE',
    'DB_PASSWORD',
    'DEEPSEEK_API_KEY',
    'GITHUB_TOKEN',
    'SSH_AUTH_SOCK',
    'my_secret',
  ])
})

test('include adds names and globs, case-insensitively', () => {
  const { env } = scrubEnvironment(source, { ...EMPTY_POLICY, include: ['node_*', 'EDITOR'] })
  expect(env).toMatchObject({ NODE_ENV: 'test', EDITOR: 'vim' })
})

test('a secret-looking name is dropped even when include names it or a glob covers it', () => {
  const { env, dropped } = scrubEnvironment(source, { ...EMPTY_POLICY, include: ['GITHUB_TOKEN', '*'] })
  for (const name of [
    'GITHUB_TOKEN',
    'DEEPSEEK_API_KEY',
    'my_secret',
    'SSH_AUTH_SOCK',
    'DB_PASSWORD',
    'AWS_SHARED_CREDENTIALS_FILE',
  ])
    expect(env).not.toHaveProperty(name)
  expect(env).toMatchObject({ NODE_ENV: 'test', EDITOR: 'vim', PATH: '/usr/bin' })
  expect(dropped).toContain('GITHUB_TOKEN')
})

test('exclude wins over the allow-list, include and the caller', () => {
  const { env, dropped } = scrubEnvironment(
    source,
    { ...EMPTY_POLICY, include: ['EDITOR'], exclude: ['editor', 'LC_*', 'P?TH'] },
    { LC_CTYPE: 'C' },
  )
  expect(env).toEqual({ HOME: '/home/u', LANG: 'C.UTF-8', TERM: 'xterm' })
  expect(dropped).toEqual(expect.arrayContaining(['EDITOR', 'LC_ALL', 'LC_CTYPE', 'PATH']))
})

test("the caller's variables are added, win over set, and lose their secret-looking names", () => {
  const { env, added, dropped } = scrubEnvironment(
    source,
    { ...EMPTY_POLICY, set: { PAGER: 'less', CI: '1' } },
    { PAGER: 'cat', API_TOKEN: 'from-caller-0123', PS1: '' },
  )
  expect(env).toMatchObject({ PAGER: 'cat', CI: '1', PS1: '' })
  expect(env).not.toHaveProperty('API_TOKEN')
  expect(added).toEqual(['CI', 'PAGER', 'PS1'])
  expect(dropped).toContain('API_TOKEN')
})

test('set wins over exclude: it is a value the user wrote', () => {
  expect(scrubEnvironment(source, { include: [], exclude: ['CI'], set: { CI: '1' } }).env.CI).toBe('1')
})

test('a policy with a secret-looking set name or a malformed pattern is refused, naming the field and the name', () => {
  expect(checkEnvPolicy({ include: [], exclude: [], set: { GITHUB_TOKEN: 'x' } })).toMatch(
    /^set: "GITHUB_TOKEN" looks like a secret/,
  )
  expect(checkEnvPolicy({ include: ['A.B'], exclude: [], set: {} })).toBe(
    'include: "A.B" is not a variable name or glob (letters, digits, _, * and ? only)',
  )
  expect(checkEnvPolicy({ include: [], exclude: ['(.*)'], set: {} })).toMatch(/^exclude: "\(\.\*\)"/)
  expect(checkEnvPolicy({ include: [], exclude: [], set: { '1X': 'y' } })).toBe('set: "1X" is not a variable name')
  expect(() => scrubEnvironment(source, { include: ['$'], exclude: [], set: {} })).toThrow(
    /environment policy: include: "\$"/,
  )
})

test('secret-looking names ignore case; ordinary names do not look secret', () => {
  for (const name of [
    'OPENAI_API_KEY',
    'anthropic_api_key',
    'GH_TOKEN',
    'Client_Secret',
    'PGPASSWORD',
    'NPM_AUTH',
    'SSH_AUTH_SOCK',
    'GPG_PASSPHRASE',
  ])
    expect(isSecretName(name)).toBe(true)
  for (const name of ['PATH', 'HOME', 'LANG', 'AUTHOR', 'TERM']) expect(isSecretName(name)).toBe(false)
})

test('a glob matches whole names only', () => {
  const matches = nameMatcher(['LC_*', 'T?'])
  expect(matches('LC_ALL')).toBe(true)
  expect(matches('XLC_ALL')).toBe(false)
  expect(matches('TZ')).toBe(true)
  expect(matches('TZZ')).toBe(false)
})
