// Gate: the framework enters only through vendor/ (vendor/README.md). Fails when a file outside vendor/
// imports cordis, @cordisjs/* or schemastery, when a package outside vendor/ depends on them, when the
// lockfile holds more than one copy of any, or when the manifest's versions or integrities drift.
import { readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { filesUnder, importsOf, packageOf, repo, workspacePackages } from '../lib.mjs'

const UPSTREAM = ['cordis', '@cordisjs/plugin-loader', 'schemastery']
const isUpstream = (name) => name === 'cordis' || name === 'schemastery' || name.startsWith('@cordisjs/')
const problems = []

for (const pkg of workspacePackages()) {
  if (pkg.rel.startsWith('vendor/')) continue
  for (const field of ['dependencies', 'devDependencies', 'peerDependencies']) {
    for (const name of Object.keys(pkg.manifest[field] ?? {})) {
      if (isUpstream(name))
        problems.push(`${pkg.rel}/package.json: ${field} lists "${name}"; depend on its @dsh/ wrapper in vendor/`)
    }
  }
}
for (const top of ['packages', 'apps', 'bench', 'scripts', 'examples']) {
  for (const file of filesUnder(join(repo, top), /\.(m?[jt]sx?|cjs)$/)) {
    for (const specifier of importsOf(readFileSync(file, 'utf8'))) {
      if (isUpstream(packageOf(specifier)))
        problems.push(`${relative(repo, file)}: imports "${specifier}"; import it from its @dsh/ wrapper in vendor/`)
    }
  }
}

const lock = readFileSync(join(repo, 'pnpm-lock.yaml'), 'utf8')
const manifest = readFileSync(join(repo, 'vendor/README.md'), 'utf8')
for (const name of UPSTREAM) {
  const escaped = name.replace(/[/.]/g, (c) => `\\${c}`)
  const copies = new Map()
  for (const match of lock.matchAll(
    new RegExp(`^  '?${escaped}@([^:'(\\s]+)[^:]*'?:\\n(?:    resolution: \\{integrity: ([^,}]+))?`, 'gm'),
  )) {
    if (match[2]) copies.set(match[1], match[2])
  }
  if (copies.size !== 1)
    problems.push(
      `pnpm-lock.yaml holds ${copies.size} copies of ${name} (${[...copies.keys()].join(', ') || 'none'}); exactly one is allowed`,
    )
  const row = manifest.split('\n').find((line) => line.includes(`| \`${name}\` |`))
  if (!row) {
    problems.push(`vendor/README.md: the manifest has no row for ${name}`)
    continue
  }
  const [version, integrity] = row
    .split('|')
    .slice(3, 5)
    .map((cell) => cell.trim())
  const [lockVersion, lockIntegrity] = [...copies.entries()][0] ?? []
  if (lockVersion && version !== lockVersion)
    problems.push(`vendor/README.md says ${name} ${version}, the lockfile has ${lockVersion}`)
  if (lockIntegrity && integrity !== lockIntegrity)
    problems.push(`vendor/README.md integrity for ${name} is "${integrity}", the lockfile has "${lockIntegrity}"`)
}

if (problems.length) {
  console.error(`vendor boundary: ${problems.length} problem(s)\n  ${problems.join('\n  ')}`)
  process.exit(1)
}
console.log('vendor boundary: ok')
