// Gate: the files generated from the protocol declarations (@dsh/sdk-protocol's TypeBox schemas, and
// @dsh/web-protocol's) are fresh. Regenerates into a temp folder and compares byte for byte with the
// checked-in copies; a stale or hand-edited file fails, naming it and the command that regenerates it.
// `--root DIR` compares against another checkout (the gate's own test runs it on a temp copy).
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { parseArgs } from 'node:util'
import { repo } from '../lib.mjs'

const { values } = parseArgs({ options: { root: { type: 'string' } } })
const root = values.root ?? repo
const generator = join(repo, 'scripts/protocol/generate.ts')
const out = mkdtempSync(join(tmpdir(), 'dsh-protocol-gate-'))
const problems = []
let compared = 0
try {
  const run = spawnSync(process.execPath, ['--conditions=@dsh/source', '--import', 'tsx', generator, '--out', out], {
    cwd: repo,
    encoding: 'utf8',
  })
  if (run.status !== 0) problems.push(`the generator failed (exit ${run.status}):\n${run.stderr || run.stdout}`)
  const walk = (dir) =>
    readdirSync(dir).flatMap((name) =>
      statSync(join(dir, name)).isDirectory() ? walk(join(dir, name)) : [join(dir, name)],
    )
  for (const file of run.status === 0 ? walk(out) : []) {
    const path = relative(out, file)
    const checkedIn = join(root, path)
    compared++
    if (!existsSync(checkedIn)) problems.push(`${path} is missing`)
    else if (readFileSync(checkedIn, 'utf8') !== readFileSync(file, 'utf8'))
      problems.push(`${path} differs from what the declarations generate (stale, or edited by hand)`)
  }
} finally {
  rmSync(out, { recursive: true, force: true })
}
if (problems.length) {
  console.error(
    `protocol generated files: ${problems.length} problem(s)\n  ${problems.join('\n  ')}\n  regenerate with: npm run generate:protocol`,
  )
  process.exit(1)
}
console.log(`protocol generated files: ok (${compared} files)`)
