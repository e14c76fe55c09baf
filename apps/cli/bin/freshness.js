// Whether the bundled launcher (apps/cli/pkg, built by scripts/bundle-cli.mjs in `npm run setup` and `pnpm build`)
// was built from the files the checkout has now: every input it recorded has the size and modification time it
// had then. One stat a file (about 1,000; a few ms), so bin/dsh.js can ask on every start.
// See .agents/notes/implemented/decision/2026-12-02-one-launcher.md.
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'

/** The record of inputs in the bundle's folder. */
export const INPUTS_FILE = 'inputs.json'

/** True when `dir` holds a bundle whose every input is unchanged; false when it is missing, partial or stale. */
export function launcherBundleIsFresh(dir) {
  let inputs
  try {
    inputs = JSON.parse(readFileSync(join(dir, INPUTS_FILE), 'utf8')).inputs
  } catch {
    return false
  }
  for (const file in inputs) {
    const stat = statSync(file, { throwIfNoEntry: false })
    const [size, mtimeMs] = inputs[file]
    if (!stat || stat.size !== size || stat.mtimeMs !== mtimeMs) return false
  }
  return true
}
