import { readdirSync, utimesSync } from 'node:fs'
import { join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import type { ScriptedResponse } from '@dsh/llm-scripted'
import { bootComposition, scriptedPatch, toolCall as call, type Harness } from '@dsh/test-harness'

const FILES = {
  'README.md': 'Project notes\nTODO: write more\n',
  'src/app.ts': 'export const app = 1\n// TODO: split\nconst x = app\n',
  'src/util/strings.ts': 'export function todo() {}\n',
  'src/util/data.json': '{ "todo": true }\n',
  'docs/guide.md': 'nothing here\n',
  '.hidden/secret.ts': 'TODO hidden\n',
}

async function boot(
  script: ScriptedResponse[],
  options: { patch?: string; files?: Record<string, string> } = {},
): Promise<Harness> {
  const h = await bootComposition({ patch: scriptedPatch({}, options.patch), workspaceFiles: options.files ?? FILES })
  onTestFinished(() => h.dispose())
  h.root.scriptedLlm.enqueue(...script, { text: 'done' })
  // One modification time for every file, so results fall back to path order; the mtime test sets its own.
  for (const entry of readdirSync(h.workspace, { recursive: true, withFileTypes: true }))
    if (entry.isFile()) utimesSync(join(entry.parentPath, entry.name), 1_700_000_000, 1_700_000_000)
  return h
}

const SEARCHES = [
  call('all-ts', 'glob', { pattern: '*.ts' }),
  call('deep', 'glob', { pattern: 'util/*', path: 'src' }),
  call('none', 'glob', { pattern: '*.py' }),
  call('files', 'grep', { pattern: 'TODO' }),
  call('lines', 'grep', { pattern: 'todo', ignore_case: true, output_mode: 'content', glob: '*.ts' }),
  call('context', 'grep', { pattern: 'split', output_mode: 'content', context: 1, path: 'src/app.ts' }),
  call('count', 'grep', { pattern: 'o', output_mode: 'count', path: 'src' }),
]
const EXPECTED: Record<string, string> = {
  'all-ts': 'src/app.ts\nsrc/util/strings.ts',
  deep: 'src/util/data.json\nsrc/util/strings.ts',
  none: 'No files match "*.py" in ./ (hidden and ignored files left out: include_ignored lists them).',
  files: 'README.md\nsrc/app.ts',
  lines: 'src/app.ts:2:// TODO: split\nsrc/util/strings.ts:1:export function todo() {}',
  context: 'src/app.ts-1-export const app = 1\nsrc/app.ts:2:// TODO: split\nsrc/app.ts-3-const x = app',
  count: 'src/app.ts:2\nsrc/util/data.json:1\nsrc/util/strings.ts:1',
}

test('with ripgrep, glob and grep return paths relative to the workspace, sorted, hidden files skipped', async () => {
  const h = await boot(SEARCHES)
  await h.run('search')
  for (const [id, text] of Object.entries(EXPECTED)) expect(h.toolText(id), id).toBe(text)
})

test('the built-in search answers the same searches the same way when ripgrep is absent', async () => {
  const h = await boot(SEARCHES, { patch: "- id: tool-fs-search\n  config: { ripgrep: '' }\n" })
  await h.run('search')
  for (const [id, text] of Object.entries(EXPECTED)) expect(h.toolText(id), id).toBe(text)
})

const REPOSITORY = {
  '.git/HEAD': 'ref: refs/heads/main\n',
  '.git/config': 'TODO in git\n',
  '.gitignore': 'build/\n*.log\n',
  '.ignore': 'vendor/\n',
  'build/out.js': 'TODO generated\n',
  'vendor/lib.js': 'TODO vendored\n',
  'debug.log': 'TODO logged\n',
  '.config/tool.js': 'TODO hidden\n',
  'main.js': 'TODO real\n',
  'src/app.js': 'TODO app\n',
}

test('glob and grep leave out .git, hidden and ignored files for every pattern, even "*" and "**/*"', async () => {
  const h = await boot(
    [
      call('star', 'glob', { pattern: '*' }),
      call('all', 'glob', { pattern: '**/*' }),
      call('grep', 'grep', { pattern: 'TODO' }),
      call('grep-glob', 'grep', { pattern: 'TODO', glob: '**/*', output_mode: 'content' }),
      call('count', 'grep', { pattern: 'TODO', glob: '*.js', output_mode: 'count' }),
    ],
    { files: REPOSITORY },
  )
  await h.run('search')
  for (const id of ['star', 'all', 'grep']) expect(h.toolText(id), id).toBe('main.js\nsrc/app.js')
  expect(h.toolText('grep-glob')).toBe('main.js:1:TODO real\nsrc/app.js:1:TODO app')
  expect(h.toolText('count')).toBe('main.js:1\nsrc/app.js:1')
})

test('include_ignored lists hidden and ignored files too, but never what is inside .git', async () => {
  const h = await boot(
    [
      call('all', 'glob', { pattern: '**/*', include_ignored: true }),
      call('grep', 'grep', { pattern: 'TODO', include_ignored: true }),
    ],
    { files: REPOSITORY },
  )
  await h.run('search')
  const all = h.toolText('all').split('\n')
  expect(all.sort()).toEqual([
    '.config/tool.js',
    '.gitignore',
    '.ignore',
    'build/out.js',
    'debug.log',
    'main.js',
    'src/app.js',
    'vendor/lib.js',
  ])
  expect(h.toolText('grep')).not.toContain('.git/')
  expect(h.toolText('grep').split('\n').sort()).toEqual([
    '.config/tool.js',
    'build/out.js',
    'debug.log',
    'main.js',
    'src/app.js',
    'vendor/lib.js',
  ])
})

for (const [engine, patch] of [
  ['ripgrep', ''],
  ['the built-in search', "- id: tool-fs-search\n  config: { ripgrep: '' }\n"],
] as const) {
  test(`with ${engine}, glob and grep list the most recently modified files first`, async () => {
    const files = { 'a.txt': 'hit\n', 'b.txt': 'hit\n', 'c.txt': 'hit\n' }
    const h = await boot(
      [
        call('g', 'glob', { pattern: '*.txt' }),
        call('f', 'grep', { pattern: 'hit' }),
        call('n', 'grep', { pattern: 'hit', output_mode: 'count' }),
      ],
      { files, patch },
    )
    for (const [file, age] of [
      ['a.txt', 300],
      ['b.txt', 100],
      ['c.txt', 200],
    ] as const)
      utimesSync(join(h.workspace, file), 1_700_000_000 - age, 1_700_000_000 - age)
    await h.run('search')
    expect(h.toolText('g')).toBe('b.txt\nc.txt\na.txt')
    expect(h.toolText('f')).toBe('b.txt\nc.txt\na.txt')
    expect(h.toolText('n')).toBe('b.txt:1\nc.txt:1\na.txt:1')
  })
}

test('results over the cap are cut with a note saying how many there were', async () => {
  const files = Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`f${i}.txt`, 'match\n']))
  const h = await boot(
    [call('g', 'glob', { pattern: '*.txt' }), call('c', 'grep', { pattern: 'match', output_mode: 'content' })],
    {
      files,
      patch: '- id: tool-fs-search\n  config: { maxResults: 3, maxMatchLines: 2 }\n',
    },
  )
  await h.run('search')
  expect(h.toolText('g')).toBe(
    'f0.txt\nf1.txt\nf2.txt\n[Showing the first 3 of 7 files. Narrow the pattern or the path to see the rest.]',
  )
  expect(h.toolText('c')).toBe(
    'f0.txt:1:match\nf1.txt:1:match\n[Showing the first 2 of 7 lines. Narrow the pattern or the path to see the rest.]',
  )
})

test('a bad pattern is a typed error with what the search engine said', async () => {
  const h = await boot([call('rg', 'grep', { pattern: 'a(' })])
  await h.run('search')
  expect(h.toolResult('rg').error).toMatchObject({
    code: 'SEARCH_FAILED',
    message: expect.stringMatching(/regex parse error[\s\S]*unclosed group/),
  })
})
