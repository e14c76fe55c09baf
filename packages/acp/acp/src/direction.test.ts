// One direction inside @dsh/acp (docs/architecture.md, "Surfaces"): the service builds the connection and
// registers the methods over it; no module reaches back into the service, and no two modules depend on each
// other. Read from the sources' own imports, so a handler that takes the service again fails here.
import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { expect, test } from 'vitest'

const dir = fileURLToPath(new URL('.', import.meta.url))
const modules = readdirSync(dir).filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))
/** Each module's imports of its siblings (`… from './x.ts'`, type-only ones and re-exports included). */
const imports = new Map(
  modules.map((name) => [
    name,
    [...readFileSync(`${dir}/${name}`, 'utf8').matchAll(/\bfrom '\.\/([\w-]+\.ts)'/g)].map((match) => match[1]!),
  ]),
)

test('only the entry point imports the service: methods, connection and sessions never call it back', () => {
  expect(imports.get('methods.ts')).toContain('connection.ts')
  expect(modules.filter((name) => imports.get(name)!.includes('service.ts'))).toEqual(['index.ts'])
})

test('the modules of @dsh/acp form no cycle', () => {
  const cycles: string[] = []
  const walk = (name: string, path: string[]) => {
    if (path.includes(name)) return void cycles.push([...path.slice(path.indexOf(name)), name].join(' → '))
    for (const next of imports.get(name) ?? []) walk(next, [...path, name])
  }
  for (const name of modules) walk(name, [])
  expect(cycles).toEqual([])
})
