// Preloaded into the measured `dsh` process (`node --import`): writes its peak resident set size (KiB) to
// $DSH_BENCH_RSS_FILE when it exits, so the benchmark reads the child's own figure on any platform.
import { writeFileSync } from 'node:fs'

const file = process.env.DSH_BENCH_RSS_FILE
if (file) process.on('exit', () => writeFileSync(file, String(process.resourceUsage().maxRSS)))
