// Runs every gate under scripts/gates, then the linter. Exit 1 if any fails (all are run regardless).
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { repo } from './lib.mjs'

let failed = 0
for (const gate of readdirSync(join(repo, 'scripts/gates'))
  .filter((name) => name.endsWith('.mjs'))
  .sort()) {
  const result = spawnSync(process.execPath, [join(repo, 'scripts/gates', gate)], { stdio: 'inherit' })
  if (result.status !== 0) failed++
}
const lint = spawnSync(
  join(repo, 'node_modules/.bin/oxlint'),
  ['--deny-warnings', '-c', join(repo, '.oxlintrc.json'), 'vendor', 'packages', 'apps', 'scripts', 'bench'],
  { stdio: 'inherit' },
)
if (lint.status !== 0) failed++
process.exit(failed ? 1 : 0)
