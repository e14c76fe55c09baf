// Gate: every package outside vendor/ has a README with the four sections of STYLE (Owns, Config,
// Model sees, Limitations), and every relative link in the repository's Markdown resolves.
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { filesUnder, repo, workspacePackages } from '../lib.mjs'

const problems = []
for (const pkg of workspacePackages()) {
  if (pkg.rel.startsWith('vendor/')) continue
  const file = join(pkg.dir, 'README.md')
  if (!existsSync(file)) {
    problems.push(`${pkg.rel}: README.md is missing`)
    continue
  }
  const text = readFileSync(file, 'utf8')
  for (const section of ['Owns', 'Config', 'Model sees', 'Limitations']) {
    if (!new RegExp(`^##\\s+${section}`, 'm').test(text))
      problems.push(`${pkg.rel}/README.md: no "## ${section}" section`)
  }
}
const markdown = [...filesUnder(repo, /\.md$/), ...filesUnder(join(repo, '.agents'), /\.md$/)]
for (const file of markdown) {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '')
  for (const match of text.matchAll(/\[[^\]]*\]\(([^)\s]+)\)/g)) {
    const target = match[1].split('#')[0]
    if (!target || /^[a-z]+:/i.test(target)) continue
    if (!existsSync(resolve(dirname(file), target)))
      problems.push(`${relative(repo, file)}: link to "${match[1]}" does not resolve`)
  }
}
if (problems.length) {
  console.error(`package docs: ${problems.length} problem(s)\n  ${problems.join('\n  ')}`)
  process.exit(1)
}
console.log(`package docs: ok (${markdown.length} Markdown files)`)
