// Keeps TypeScript project references in step with package.json: the root tsconfig.json references every
// workspace package that has a tsconfig.json, and each package references the workspace packages it
// depends on. Run by `pnpm build` so nobody edits references by hand. Writes only when something changed.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { repo, workspacePackages } from './lib.mjs'

const packages = workspacePackages().filter((pkg) => existsSync(join(pkg.dir, 'tsconfig.json')))
const byName = new Map(packages.map((pkg) => [pkg.manifest.name, pkg]))
const write = (file, json) => {
  const text = JSON.stringify(json, null, 2) + '\n'
  if (!existsSync(file) || readFileSync(file, 'utf8') !== text) writeFileSync(file, text)
}

for (const pkg of packages) {
  const file = join(pkg.dir, 'tsconfig.json')
  const config = JSON.parse(readFileSync(file, 'utf8'))
  // Only runtime dependencies: tests (excluded from the build) may depend on bundles that depend on us.
  const deps = Object.keys(pkg.manifest.dependencies ?? {})
  const refs = [...new Set(deps)].filter((name) => byName.has(name) && name !== pkg.manifest.name).sort()
  config.references = refs.map((name) => ({ path: relative(pkg.dir, byName.get(name).dir) }))
  if (!config.references.length) delete config.references
  write(file, config)
}
const rootFile = join(repo, 'tsconfig.json')
write(rootFile, {
  files: [],
  references: packages.map((pkg) => ({ path: pkg.rel })).sort((a, b) => a.path.localeCompare(b.path)),
})
