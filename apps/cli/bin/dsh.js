#!/usr/bin/env node
// The checkout's launcher starts the way the installed package does: from the bundle `npm run setup` and
// `pnpm build` write to apps/cli/pkg (scripts/bundle-cli.mjs), when it was built from the sources there are now.
// Otherwise (not built yet, or a source changed since) it runs the same launcher from each package's dist, which
// is always current but loads ~80 packages one by one. DSH_LAUNCHER=dist asks for the second way.
// See .agents/notes/implemented/decision/2026-12-02-one-launcher.md.
import { fileURLToPath } from 'node:url'
import { launcherBundleIsFresh } from './freshness.js'

const bundle = fileURLToPath(new URL('../pkg', import.meta.url))
if (process.env.DSH_LAUNCHER !== 'dist' && launcherBundleIsFresh(bundle)) await import('../pkg/dist/dsh.mjs')
else await import('../dist/bin.js')
