// Helpers shared by the gate and setup scripts (plain Node, no dependencies: they run before install).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

export const repo = join(fileURLToPath(import.meta.url), '../..')

/** Every workspace package under `root` (the repository unless a gate's test names a fixture): `{ dir, rel, manifest }`, from the globs of pnpm-workspace.yaml. */
export function workspacePackages(root = repo) {
  const roots = [['vendor'], ['apps'], ...readdirSync(join(root, 'packages')).map((group) => ['packages', group])]
  const out = []
  const bench = join(root, 'bench/package.json')
  if (existsSync(bench))
    out.push({ dir: join(root, 'bench'), rel: 'bench', manifest: JSON.parse(readFileSync(bench, 'utf8')) })
  for (const parts of roots) {
    const base = join(root, ...parts)
    if (!existsSync(base) || !statSync(base).isDirectory()) continue
    for (const name of readdirSync(base)) {
      const dir = join(base, name)
      const file = join(dir, 'package.json')
      if (!existsSync(file)) continue
      out.push({ dir, rel: relative(root, dir), manifest: JSON.parse(readFileSync(file, 'utf8')) })
    }
  }
  return out
}

/** Files under `dir` (recursively) whose names match `pattern`, skipping node_modules, dist and dot-folders. */
export function filesUnder(dir, pattern) {
  const out = []
  const walk = (current) => {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue
      const path = join(current, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (pattern.test(entry.name)) out.push(path)
    }
  }
  if (existsSync(dir)) walk(dir)
  return out
}

/** Module specifiers a source file imports (static, dynamic, re-exports, require). */
export function importsOf(text) {
  const specs = []
  const patterns = [
    /\bfrom\s+['"]([^'"]+)['"]/g,
    /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
    /\bimport\s+['"]([^'"]+)['"]/g,
    /\brequire\(\s*['"]([^'"]+)['"]\s*\)/g,
  ]
  for (const pattern of patterns) for (const match of text.matchAll(pattern)) specs.push(match[1])
  return specs
}

/** The package a specifier names (`@scope/name/sub` → `@scope/name`). */
export function packageOf(specifier) {
  const parts = specifier.split('/')
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]
}
