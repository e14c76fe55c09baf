// Gate: the dependency direction of docs/architecture.md. Every workspace package declares `dsh.role`.
// Providers, consumers and standalone plugins depend only on definitions (and libraries and vendor/),
// never on each other, on bundles or on the app. Every `@dsh/*` a source file imports must be a declared
// dependency, and no source file reaches into another package by a relative path.
import { readFileSync } from 'node:fs'
import { join, relative, resolve, dirname } from 'node:path'
import { filesUnder, importsOf, packageOf, repo, workspacePackages } from '../lib.mjs'

const ALLOWED = {
  vendor: ['vendor'],
  definition: ['vendor', 'definition', 'library'],
  library: ['vendor', 'definition', 'library'],
  provider: ['vendor', 'definition', 'library'],
  consumer: ['vendor', 'definition', 'library'],
  plugin: ['vendor', 'definition', 'library'],
  // Test support is only ever a devDependency, so it may stand on the whole product to boot it.
  'test-support': ['vendor', 'definition', 'library', 'test-support', 'bundle', 'app'],
  bundle: ['vendor', 'definition', 'library', 'provider', 'consumer', 'plugin', 'test-support', 'bundle'],
  app: ['vendor', 'definition', 'library', 'bundle', 'app'],
  bench: ['vendor', 'definition', 'library', 'provider', 'consumer', 'plugin', 'test-support', 'bundle', 'app'],
}

const packages = workspacePackages()
const roleOf = new Map(packages.map((pkg) => [pkg.manifest.name, pkg.rel.startsWith('vendor/') ? 'vendor' : pkg.manifest.dsh?.role]))
const problems = []

for (const pkg of packages) {
  const role = roleOf.get(pkg.manifest.name)
  if (!ALLOWED[role]) {
    problems.push(`${pkg.rel}/package.json: "dsh.role" must be one of ${Object.keys(ALLOWED).filter((r) => r !== 'vendor').join(', ')} (found ${JSON.stringify(role)})`)
    continue
  }
  const deps = Object.keys(pkg.manifest.dependencies ?? {})
  for (const dep of deps) {
    const depRole = roleOf.get(dep)
    if (depRole === undefined) continue
    if (!ALLOWED[role].includes(depRole)) problems.push(`${pkg.rel}: a ${role} may not depend on ${dep} (a ${depRole}); depend on its definition instead`)
  }
  const declared = new Set([...deps, ...Object.keys(pkg.manifest.peerDependencies ?? {})])
  const devDeclared = new Set(Object.keys(pkg.manifest.devDependencies ?? {}))
  for (const file of filesUnder(join(pkg.dir, 'src'), /\.(m?[jt]sx?)$/)) {
    const isTest = /\.test\.tsx?$|[\\/](test-support|fixtures)[\\/]/.test(file)
    for (const specifier of importsOf(readFileSync(file, 'utf8'))) {
      if (specifier.startsWith('.')) {
        const target = resolve(dirname(file), specifier)
        if (!isTest && !target.startsWith(pkg.dir + '/')) problems.push(`${relative(repo, file)}: "${specifier}" reaches outside its package; import the package by name`)
        continue
      }
      const name = packageOf(specifier)
      if (!name.startsWith('@dsh/')) continue
      if (declared.has(name) || (isTest && devDeclared.has(name)) || name === pkg.manifest.name) continue
      problems.push(`${relative(repo, file)}: imports ${name}, which ${pkg.rel}/package.json does not list in ${isTest ? 'dependencies or devDependencies' : 'dependencies'}`)
    }
  }
}

if (problems.length) {
  console.error(`dependency direction: ${problems.length} problem(s)\n  ${problems.join('\n  ')}`)
  process.exit(1)
}
console.log(`dependency direction: ok (${packages.length} packages)`)
