import { availableParallelism } from 'node:os'
import { fileURLToPath } from 'node:url'
import { defaultServerConditions } from 'vite'
import { configDefaults, defineConfig } from 'vitest/config'

// One project for every package's tests (docs/architecture.md, "Tests"): a module that many packages import
// is transformed once for the whole run, not once per package (measured 2026-12-01: a project per package
// spent 628 s of a 690 s run transforming the same sources again). Run one package's tests by path:
// `npx vitest run packages/boot/app-boot/`.
const conditions = ['@dsh/source', ...defaultServerConditions]
// Twice the cores: most tests wait on real processes (bash, bubblewrap, dsh, Chromium, MCP servers), so one
// worker per core left the CPU half idle (vitest's default on 2 cores is a single worker; 1,026 s → 690 s).
const maxWorkers = Number(process.env.DSH_TEST_WORKERS) || availableParallelism() * 2
// Each file's CPU and dsh launches, when scripts/test-all.mjs asks for them (DSH_TEST_PROFILE_DIR).
const setupFiles = [
  fileURLToPath(new URL('scripts/file-profile-setup.mjs', import.meta.url)),
  fileURLToPath(new URL('scripts/shared-worker-guard.mjs', import.meta.url)),
]
const include = [
  'packages/*/*/src/**/*.test.ts',
  'apps/*/src/**/*.test.ts',
  'vendor/*/src/**/*.test.ts',
  // The example plugins' own tests (docs/extending.md, "Writing a dsh plugin").
  'examples/*/test/**/*.test.ts',
]
// Files that need a process of their own (a fresh one per file, vitest's isolation), each for a stated reason.
// Every other file shares its worker process with the files before it (scripts/shared-worker-guard.mjs fails a
// file that leaves the process changed): a fork per file loaded vitest and the
// product's module graph again 267 times (measured 2026-12-04, whole suite without coverage on 2 cores: 11.3
// CPU-minutes isolated, 6.5 shared; docs/quality.md, "Where the suite's time goes"). A file that changes
// process-wide state must restore it by its end, or be listed here.
const ownProcess = [
  // Points HOME at a fake home for its attacks while its compositions run.
  'packages/authority/escape-suite/src/homes.test.ts',
  // Asserts that no command cgroup of this process is left, which another file's live composition may hold.
  'packages/sandbox/sandbox-local/src/limits.test.ts',
]
const packagesTest = {
  setupFiles,
  // Generous: with several workers on 2 cores, a test that spawns dsh seven times can take 30 s
  // without anything being wrong; a hang still fails, only later.
  testTimeout: 90_000,
  hookTimeout: 90_000,
  // A poll without its own timeout waits as long as a loaded CI machine may need (vitest's 1 s is
  // an idle laptop's): a poll only takes this long when its test is failing anyway.
  expect: { poll: { timeout: 30_000, interval: 20 } },
}

export default defineConfig({
  test: {
    maxWorkers,
    projects: [
      {
        ssr: { resolve: { conditions } },
        resolve: { conditions },
        test: {
          ...packagesTest,
          name: 'packages',
          include,
          exclude: [...configDefaults.exclude, ...ownProcess],
          isolate: false,
        },
      },
      {
        ssr: { resolve: { conditions } },
        resolve: { conditions },
        test: { ...packagesTest, name: 'packages-own-process', include: ownProcess },
      },
      // The repository's own scripts (the gates), tested on fixture workspaces.
      { test: { name: 'scripts', root: 'scripts', include: ['*.test.mjs'], setupFiles, testTimeout: 60_000 } },
    ],
  },
})
