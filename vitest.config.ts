import { readdirSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import { defaultServerConditions } from 'vite'
import { defineConfig } from 'vitest/config'

// One configuration, one project per package that has tests (docs/architecture.md, "Tests").
const groups = ['vendor', 'apps', ...readdirSync('packages').map((group) => join('packages', group))]
const packages = groups
  .flatMap((dir) => (existsSync(dir) ? readdirSync(dir).map((name) => join(dir, name)) : []))
  .filter((dir) => existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'src')))

export default defineConfig({
  test: {
    projects: [
      ...packages.map((root) => ({
        ssr: { resolve: { conditions: ['@dsh/source', ...defaultServerConditions] } },
        resolve: { conditions: ['@dsh/source', ...defaultServerConditions] },
        test: {
          name: root.replace(/^packages\//, ''),
          root,
          include: ['src/**/*.test.ts'],
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      })),
      // The repository's own scripts (the gates), tested on fixture workspaces.
      { test: { name: 'scripts', root: 'scripts', include: ['*.test.mjs'], testTimeout: 60_000 } },
    ],
  },
})
