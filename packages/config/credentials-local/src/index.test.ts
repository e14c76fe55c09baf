import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, expect, test } from 'vitest'
import type { CredentialError } from '@dsh/credentials'
import { bootComposition, type Harness } from '@dsh/test-harness'

// Names unique to this run, so the real environment never answers for them.
const unique = (label: string) =>
  `DSH_TEST_${label}_${process.pid}_${Math.random().toString(36).slice(2, 8).toUpperCase()}`
const envNames: string[] = []
const open: Harness[] = []
afterEach(async () => {
  for (const name of envNames.splice(0)) delete process.env[name]
  for (const h of open.splice(0)) await h.dispose()
})

async function boot(files: { home?: string; dotenv?: string } = {}): Promise<Harness> {
  const h = await bootComposition({
    homeFiles: files.home === undefined ? {} : { '.credentials.yaml': files.home },
    workspaceFiles: files.dotenv === undefined ? {} : { '.env': files.dotenv },
  })
  open.push(h)
  return h
}

const credentialsFile = (h: Harness) => join(h.home, '.credentials.yaml')
const modeOf = (file: string) => statSync(file).mode & 0o777
const logText = (h: Harness) => (h.root.logger as any).buffer.map((message: any) => message.args.join(' ')).join('\n')

test('the environment wins over the home file, and the home file over the workspace .env', async () => {
  const [all, homeAndDotenv, dotenvOnly] = [unique('ALL'), unique('HOME'), unique('DOTENV')]
  envNames.push(all)
  process.env[all] = 'from-the-environment'
  const h = await boot({
    home: `${all}: all-from-home-file\n${homeAndDotenv}: home-from-home-file\n`,
    dotenv: `${all}=all-from-dotenv\n${homeAndDotenv}=home-from-dotenv\n${dotenvOnly}=dotenv-from-dotenv\n`,
  })
  const credentials = h.root.credentials
  expect(await credentials.resolve(all)).toBe('from-the-environment')
  expect(await credentials.resolve(homeAndDotenv)).toBe('home-from-home-file')
  expect(await credentials.resolve(dotenvOnly)).toBe('dotenv-from-dotenv')
  expect((await credentials.describe(all)).source).toBe('env')
  expect(await credentials.describe(homeAndDotenv)).toEqual({
    name: homeAndDotenv,
    set: true,
    source: 'home-file',
    location: credentialsFile(h),
  })
  expect(await credentials.describe(dotenvOnly)).toEqual({
    name: dotenvOnly,
    set: true,
    source: 'dotenv',
    location: join(h.workspace, '.env'),
  })
})

test('a value is resolved on every call, so a key rotated in the file is picked up without a restart', async () => {
  const name = unique('ROTATED')
  const h = await boot({ home: `${name}: first-value-1234\n` })
  expect(await h.root.credentials.resolve(name)).toBe('first-value-1234')
  writeFileSync(credentialsFile(h), `${name}: second-value-5678\n`, { mode: 0o600 })
  expect(await h.root.credentials.resolve(name)).toBe('second-value-5678')
})

test('the workspace .env is read with comments, quotes and the export prefix', async () => {
  const [quoted, single, exported] = [unique('QUOTED'), unique('SINGLE'), unique('EXPORTED')]
  const h = await boot({
    dotenv: `# a comment\n${quoted}="quoted value" # trailing\n\n${single}='single quoted'\nexport ${exported}=exported-value\n`,
  })
  expect(await h.root.credentials.resolve(quoted)).toBe('quoted value')
  expect(await h.root.credentials.resolve(single)).toBe('single quoted')
  expect(await h.root.credentials.resolve(exported)).toBe('exported-value')
})

test('describe says where a credential is set and never returns its value', async () => {
  const [inEnv, inHome, inDotenv, missing] = [unique('ENV'), unique('HOME'), unique('DOTENV'), unique('MISSING')]
  envNames.push(inEnv)
  process.env[inEnv] = 'secret-env-value-1'
  const h = await boot({ home: `${inHome}: secret-home-value-2\n`, dotenv: `${inDotenv}=secret-dotenv-value-3\n` })
  const described = await Promise.all(
    [inEnv, inHome, inDotenv, missing].map((name) => h.root.credentials.describe(name)),
  )
  expect(described.map((status) => [status.source, status.set])).toEqual([
    ['env', true],
    ['home-file', true],
    ['dotenv', true],
    ['missing', false],
  ])
  expect(JSON.stringify(described)).not.toMatch(/secret-/)
})

test('set creates the credentials file with mode 0600 and a later resolve reads it', async () => {
  const name = unique('NEW')
  const h = await boot()
  expect(existsSync(credentialsFile(h))).toBe(false)
  await h.root.credentials.set(name, 'sk-new-value-0001')
  expect(modeOf(credentialsFile(h))).toBe(0o600)
  expect(readFileSync(credentialsFile(h), 'utf8')).toBe(`${name}: sk-new-value-0001\n`)
  expect(await h.root.credentials.describe(name)).toMatchObject({ set: true, source: 'home-file' })
})

test('set tightens an existing 0644 credentials file to 0600 and logs a warning that holds no value', async () => {
  const [kept, added] = [unique('KEPT'), unique('ADDED')]
  const h = await boot({ home: `# my keys\n${kept}: sk-kept-value-0002\n` })
  chmodSync(credentialsFile(h), 0o644)
  await h.root.credentials.set(added, 'sk-added-value-0003')
  expect(modeOf(credentialsFile(h))).toBe(0o600)
  expect(readFileSync(credentialsFile(h), 'utf8')).toBe(
    `# my keys\n${kept}: sk-kept-value-0002\n${added}: sk-added-value-0003\n`,
  )
  expect(logText(h)).toContain(`${credentialsFile(h)} was accessible to others (mode 0644); its mode is now 0600`)
  expect(logText(h)).not.toMatch(/sk-(kept|added)-value/)
})

test('a credentials file loosened while running is tightened on the next resolve', async () => {
  const name = unique('LOOSE')
  const h = await boot({ home: `${name}: sk-loose-value-0004\n` })
  chmodSync(credentialsFile(h), 0o640)
  expect(await h.root.credentials.resolve(name)).toBe('sk-loose-value-0004')
  expect(modeOf(credentialsFile(h))).toBe(0o600)
})

test('remove deletes the name from the file and keeps the other lines and comments', async () => {
  const [gone, kept] = [unique('GONE'), unique('KEPT')]
  const h = await boot({ home: `# keys\n\n${gone}: sk-gone-value-0005\n# the kept one\n${kept}: sk-kept-value-0006\n` })
  expect(await h.root.credentials.remove(gone)).toBe(true)
  expect(await h.root.credentials.remove(gone)).toBe(false)
  expect(readFileSync(credentialsFile(h), 'utf8')).toBe(`# keys\n\n# the kept one\n${kept}: sk-kept-value-0006\n`)
  expect(await h.root.credentials.describe(gone)).toMatchObject({ set: false, source: 'missing' })
})

test('redact replaces resolved, set and removed values with a marker naming the credential', async () => {
  const [resolved, stored, removed] = [unique('RESOLVED'), unique('STORED'), unique('REMOVED')]
  const h = await boot({ dotenv: `${resolved}=sk-resolved-value-0007\n`, home: `${removed}: sk-removed-value-0009\n` })
  await h.root.credentials.resolve(resolved)
  await h.root.credentials.set(stored, 'sk-stored-value-0008')
  await h.root.credentials.remove(removed)
  const text = h.root.credentials.redact(
    '401 for sk-resolved-value-0007, sk-stored-value-0008 and sk-removed-value-0009',
  )
  expect(text).toBe(`401 for «redacted:${resolved}», «redacted:${stored}» and «redacted:${removed}»`)
})

test('redact hides every value in the credentials file, even for names nobody asked about', async () => {
  const name = unique('UNASKED')
  const h = await boot({ home: `${name}: sk-unasked-value-0010\n` })
  expect(h.root.credentials.redact('error: bad key sk-unasked-value-0010')).toBe(`error: bad key «redacted:${name}»`)
})

test('redact hides the current environment value of a name that was asked about', async () => {
  const name = unique('ENVIRONMENT')
  envNames.push(name)
  const h = await boot()
  await h.root.credentials.describe(name)
  process.env[name] = 'sk-exported-later-0011'
  expect(h.root.credentials.redact('Bearer sk-exported-later-0011')).toBe(`Bearer «redacted:${name}»`)
})

test('requireCredential throws CREDENTIAL_MISSING naming the variable and every place it looked', async () => {
  const name = unique('ABSENT')
  const h = await boot()
  const error = await h.root.credentials.requireCredential(name).catch((caught: CredentialError) => caught)
  expect(error).toMatchObject({ name: 'CredentialError', code: 'CREDENTIAL_MISSING', credential: name })
  expect((error as Error).message).toBe(
    `${name} is not set: export it, or add "${name}: <value>" to ${credentialsFile(h)} (looked in the environment, ${credentialsFile(h)}, ${join(h.workspace, '.env')})`,
  )
})

test('a malformed credentials file is an error naming the file and line that never quotes the file', async () => {
  const name = unique('BROKEN')
  const h = await boot()
  writeFileSync(credentialsFile(h), `${name}: sk-fine-0012\nOTHER: "sk-unterminated-0013\n`, { mode: 0o600 })
  const error = await h.root.credentials.resolve(name).catch((caught: CredentialError) => caught)
  expect(error).toMatchObject({ code: 'CREDENTIALS_FILE_INVALID' })
  expect((error as Error).message).toMatch(new RegExp(`^${credentialsFile(h)}:3: malformed YAML \\(\\w+\\)$`))
})

test('set refuses a name that is not a variable name and a value with a line break, writing nothing', async () => {
  const h = await boot()
  await expect(h.root.credentials.set('not a name', 'sk-value-0014')).rejects.toMatchObject({
    code: 'CREDENTIAL_NAME_INVALID',
  })
  const error = await h.root.credentials
    .set(unique('MULTILINE'), 'sk-line-one\nsk-line-two')
    .catch((caught: CredentialError) => caught)
  expect(error).toMatchObject({ code: 'CREDENTIAL_VALUE_INVALID' })
  expect((error as Error).message).not.toContain('sk-line')
  expect(existsSync(credentialsFile(h))).toBe(false)
})

test('a value shorter than minRedactLength is left in text and a warning names the credential, not the value', async () => {
  const name = unique('SHORT')
  const h = await boot({ home: `${name}: abc12\n` })
  expect(h.root.credentials.redact('pin abc12')).toBe('pin abc12')
  expect(logText(h)).toContain(`${name} is shorter than 8 characters and is not redacted from text`)
  expect(logText(h)).not.toContain('abc12')
})

test('redact hides the value of every secret-looking variable of the process, even one nobody asked about', async () => {
  const [secret, plain] = [unique('DEPLOY_TOKEN'), unique('GREETING')]
  envNames.push(secret, plain)
  process.env[secret] = 'tok-never-asked-0015'
  process.env[plain] = 'hello-world-0016'
  const h = await boot()
  expect(h.root.credentials.redact('got tok-never-asked-0015 and hello-world-0016')).toBe(
    `got «redacted:${secret}» and hello-world-0016`,
  )
})
