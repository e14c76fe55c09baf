// Runs benchmarks and writes each one's section of docs/performance.md.
// Usage: node scripts/bench.mjs [name ...]   (names are folders of bench/; default: all)
// A benchmark is bench/<name>/run.mjs whose default export returns Markdown for its section.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { repo } from './lib.mjs'

const wanted = process.argv.slice(2)
const names = readdirSync(join(repo, 'bench')).filter((name) => existsSync(join(repo, 'bench', name, 'run.mjs')))
const selected = wanted.length ? wanted : names
const docPath = join(repo, 'docs/performance.md')
let doc = readFileSync(docPath, 'utf8')
for (const name of selected) {
  if (!names.includes(name)) {
    console.error(`bench: no benchmark "${name}" (have: ${names.join(', ')})`)
    process.exit(2)
  }
  console.error(`bench: ${name}…`)
  const { default: runBench } = await import(pathToFileURL(join(repo, 'bench', name, 'run.mjs')).href)
  const section = (await runBench()).trim()
  const stamp = `_Measured ${new Date().toISOString().slice(0, 10)} on ${process.version}, ${(await import('node:os')).cpus().length} cores._`
  const body = `<!-- bench:${name} -->\n${section}\n\n${stamp}\n<!-- /bench:${name} -->`
  const pattern = new RegExp(`<!-- bench:${name} -->[\\s\\S]*?<!-- /bench:${name} -->`)
  doc = pattern.test(doc) ? doc.replace(pattern, body) : `${doc.trimEnd()}\n\n${body}\n`
  writeFileSync(docPath, doc)
  console.log(section)
}
