// Gate: every source file is formatted by Prettier (the config is .prettierrc.json; what it leaves alone is
// .prettierignore: Markdown, YAML, JSON and generated files). A file that is not fails, naming it and the fix.
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { repo } from '../lib.mjs'

const run = spawnSync(join(repo, 'node_modules/.bin/prettier'), ['--check', '--log-level', 'warn', '.'], {
  cwd: repo,
  encoding: 'utf8',
})
if (run.status !== 0) {
  const files = `${run.stdout}${run.stderr}`.trim().replace(/^\[warn\] /gm, '')
  console.error(
    `format: files not formatted by Prettier (run \`npm run format\`):\n  ${files.split('\n').join('\n  ')}`,
  )
  process.exit(1)
}
console.log('format: ok')
