// Gate: the dependency direction of docs/architecture.md. Every workspace package declares `dsh.role`.
// Providers, consumers, standalone plugins and surfaces depend only on definitions, services, libraries and
// vendor/, never on each other, on bundles or on the app. Every `@dsh/*` a source file imports must be a
// declared dependency, and no source file reaches into another package by a relative path. A package
// labelled `definition` must hold one in substance (scripts/definition-substance.mjs), so the direction
// rests on what the code is, not on its label. The folders tell the layers (docs/architecture.md, "Layers"),
// and that too is checked on what each package depends on, not on its folder name alone (FOLDER_LAYERS).
// Usage: node scripts/gates/dependency-direction.mjs [root]   (root: the repository unless a test names a fixture)
import { readFileSync } from 'node:fs'
import { join, relative, resolve, dirname } from 'node:path'
import { filesUnder, importsOf, packageOf, repo, workspacePackages } from '../lib.mjs'
import { definitionFileProblems } from '../definition-substance.mjs'

// A service owns a `ctx.<key>` and is its one implementation: everyone may depend on it as on a definition
// (its types are the seam's). Providers, consumers, plugins and surfaces still never depend on each other.
const SEAMS = ['vendor', 'definition', 'service', 'library']
const ALLOWED = {
  vendor: ['vendor'],
  definition: SEAMS,
  service: SEAMS,
  library: SEAMS,
  provider: SEAMS,
  consumer: SEAMS,
  plugin: SEAMS,
  surface: SEAMS,
  // Test support is only ever a devDependency, so it may stand on the whole product to boot it.
  'test-support': [...SEAMS, 'test-support', 'bundle', 'app'],
  bundle: [...SEAMS, 'provider', 'consumer', 'plugin', 'surface', 'test-support', 'bundle'],
  app: [...SEAMS, 'bundle', 'app'],
  bench: [...SEAMS, 'provider', 'consumer', 'plugin', 'surface', 'test-support', 'bundle', 'app'],
}
// What a package in each layer folder may stand on at runtime. `packages/ground/` is what nearly every
// plugin imports (`@dsh/app`, `@dsh/cmdline`), so it stands on nothing but vendor/ and itself; the model
// layer (`packages/llm/`) stands below the agent layer (`packages/core/`), so it never imports upward.
const FOLDER_LAYERS = [
  { folder: 'packages/ground/', may: (dir) => dir.startsWith('vendor/') || dir.startsWith('packages/ground/') },
  { folder: 'packages/llm/', may: (dir) => !dir.startsWith('packages/core/') },
]
// `packages/boot/` is the top of the stack (the composer and the bundles): only the app, bundles, test
// support and benchmarks stand on it.
const TOP_FOLDER = 'packages/boot/'
const MAY_STAND_ON_TOP = new Set(['bundle', 'app', 'test-support', 'bench'])
const TEST_FILE = /\.test\.tsx?$|[\\/](test-support|fixtures)[\\/]/

const root = process.argv[2] ? resolve(process.argv[2]) : repo
const packages = workspacePackages(root)
const roleOf = new Map(
  packages.map((pkg) => [pkg.manifest.name, pkg.rel.startsWith('vendor/') ? 'vendor' : pkg.manifest.dsh?.role]),
)
const dirOf = new Map(packages.map((pkg) => [pkg.manifest.name, pkg.rel + '/']))
const problems = []

for (const pkg of packages) {
  const role = roleOf.get(pkg.manifest.name)
  if (!ALLOWED[role]) {
    problems.push(
      `${pkg.rel}/package.json: "dsh.role" must be one of ${Object.keys(ALLOWED)
        .filter((r) => r !== 'vendor')
        .join(', ')} (found ${JSON.stringify(role)})`,
    )
    continue
  }
  if (role === 'definition') {
    for (const file of filesUnder(join(pkg.dir, 'src'), /\.tsx?$/))
      if (!TEST_FILE.test(file)) problems.push(...definitionFileProblems(file, root))
  }
  const deps = Object.keys(pkg.manifest.dependencies ?? {})
  for (const dep of deps) {
    const depRole = roleOf.get(dep)
    if (depRole === undefined) continue
    if (!ALLOWED[role].includes(depRole))
      problems.push(
        `${pkg.rel}: a ${role} may not depend on ${dep} (a ${depRole}); depend on its definition or service instead`,
      )
  }
  for (const dep of deps) {
    const depDir = dirOf.get(dep)
    if (depDir === undefined) continue
    for (const layer of FOLDER_LAYERS)
      if (pkg.rel.startsWith(layer.folder) && !layer.may(depDir))
        problems.push(`${pkg.rel}: ${layer.folder} may not depend on ${dep} (${depDir}): it is a layer above`)
    if (depDir.startsWith(TOP_FOLDER) && !MAY_STAND_ON_TOP.has(role))
      problems.push(`${pkg.rel}: a ${role} may not depend on ${dep} (${depDir}): ${TOP_FOLDER} is the top of the stack`)
  }
  // The composer is the one library at the top; any other role there is ground or a plugin in the wrong place.
  if (pkg.rel.startsWith(TOP_FOLDER) && !MAY_STAND_ON_TOP.has(role) && role !== 'library')
    problems.push(`${pkg.rel}: a ${role} does not belong in ${TOP_FOLDER} (the composer and the bundles)`)
  const declared = new Set([...deps, ...Object.keys(pkg.manifest.peerDependencies ?? {})])
  const devDeclared = new Set(Object.keys(pkg.manifest.devDependencies ?? {}))
  for (const file of filesUnder(join(pkg.dir, 'src'), /\.(m?[jt]sx?)$/)) {
    const isTest = TEST_FILE.test(file)
    for (const specifier of importsOf(readFileSync(file, 'utf8'))) {
      if (specifier.startsWith('.')) {
        const target = resolve(dirname(file), specifier)
        if (!isTest && !target.startsWith(pkg.dir + '/'))
          problems.push(
            `${relative(root, file)}: "${specifier}" reaches outside its package; import the package by name`,
          )
        continue
      }
      const name = packageOf(specifier)
      if (!name.startsWith('@dsh/')) continue
      if (declared.has(name) || (isTest && devDeclared.has(name)) || name === pkg.manifest.name) continue
      problems.push(
        `${relative(root, file)}: imports ${name}, which ${pkg.rel}/package.json does not list in ${isTest ? 'dependencies or devDependencies' : 'dependencies'}`,
      )
    }
  }
}

if (problems.length) {
  console.error(`dependency direction: ${problems.length} problem(s)\n  ${problems.join('\n  ')}`)
  process.exit(1)
}
console.log(`dependency direction: ok (${packages.length} packages)`)
