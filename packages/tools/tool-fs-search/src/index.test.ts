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

async function boot(script: ScriptedResponse[], options: { patch?: string; files?: Record<string, string> } = {}): Promise<Harness> {
  const h = await bootComposition({ patch: scriptedPatch({}, options.patch), workspaceFiles: options.files ?? FILES })
  onTestFinished(() => h.dispose())
  h.root.scriptedLlm.enqueue(...script, { text: 'done' })
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
  none: 'No files match "*.py" in ./.',
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

test("ripgrep is what runs when present: a git repository's ignored files are left out", async () => {
  const files = { '.git/HEAD': 'ref: refs/heads/main\n', '.gitignore': 'build/\n', 'build/out.js': 'TODO generated\n', 'main.js': 'TODO real\n' }
  const h = await boot([call('rg', 'grep', { pattern: 'TODO' })], { files })
  await h.run('search')
  expect(h.toolText('rg')).toBe('main.js')
})

test('results over the cap are cut with a note saying how many there were', async () => {
  const files = Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`f${i}.txt`, 'match\n']))
  const h = await boot([call('g', 'glob', { pattern: '*.txt' }), call('c', 'grep', { pattern: 'match', output_mode: 'content' })], {
    files,
    patch: '- id: tool-fs-search\n  config: { maxResults: 3, maxMatchLines: 2 }\n',
  })
  await h.run('search')
  expect(h.toolText('g')).toBe('f0.txt\nf1.txt\nf2.txt\n[Showing the first 3 of 7 files. Narrow the pattern or the path to see the rest.]')
  expect(h.toolText('c')).toBe('f0.txt:1:match\nf1.txt:1:match\n[Showing the first 2 of 7 lines. Narrow the pattern or the path to see the rest.]')
})

test('a bad pattern is a typed error with what the search engine said', async () => {
  const h = await boot([call('rg', 'grep', { pattern: 'a(' })])
  await h.run('search')
  expect(h.toolResult('rg').error).toMatchObject({ code: 'SEARCH_FAILED', message: expect.stringMatching(/regex parse error[\s\S]*unclosed group/) })
})
