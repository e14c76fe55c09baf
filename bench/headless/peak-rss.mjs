// Preloaded into the measured `dsh` process (`node --import`): writes its peak resident set size (KiB) to
// $DSH_BENCH_RSS_FILE when it exits, so the benchmark reads the child's own figure on any platform. With
// $DSH_BENCH_MEMORY_FILE it also appends the wall clock, `process.cpuUsage()` and `process.memoryUsage()` once a
// second (one JSON line each), so a long run shows what grows (heap, external, array buffers) rather than only
// the peak, and the CPU time a step costs, which a loaded machine changes less than the wall-clock gap.
import { appendFileSync, writeFileSync } from 'node:fs'

const file = process.env.DSH_BENCH_RSS_FILE
if (file) process.on('exit', () => writeFileSync(file, String(process.resourceUsage().maxRSS)))
const samples = process.env.DSH_BENCH_MEMORY_FILE
if (samples)
  setInterval(
    () =>
      appendFileSync(
        samples,
        JSON.stringify({ wall: Date.now(), cpu: process.cpuUsage(), ...process.memoryUsage() }) + '\n',
      ),
    1000,
  ).unref()
