// Gate: apps/cli/settings-keys.json (the keys each shipped profile defines, which the launcher uses to
// tell a settings typo from another profile's setting) is what booting the profiles gives. Needs a build.
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { repo } from '../lib.mjs'

const run = spawnSync(process.execPath, [join(repo, 'scripts/settings-keys.mjs'), '--check'], { stdio: 'inherit' })
process.exit(run.status ?? 1)
