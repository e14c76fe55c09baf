// One confined command, taken apart (bench/confine, issue #29.2): the argv `ctx.sandbox` makes for `echo hi`
// under a session's real authority (workspace-write, the default secret and protected paths, the proxy),
// spawned and waited for, next to the same argv with one layer taken off at a time. The variants run in a
// random order in each round, so the machine's load falls on all of them alike; the bare confined `true` is
// the measure of that load.
import { spawnSync } from 'node:child_process'
import { bootComposition } from '@dsh/test-harness'
import { BARE_BWRAP, ms, summarize } from '../stats.mjs'
// The chain of shells the one launcher replaced (still the fallback without a known prlimit64: limits.ts, fences.ts).
import { limitedArgv } from '../../packages/sandbox/sandbox-local/dist/limits.js'
import { tidiedArgv } from '../../packages/sandbox/sandbox-local/dist/fences.js'

const ROUNDS = 60
const COMMAND = ['bash', '-c', 'echo hi']

export default async function run() {
  const h = await bootComposition({})
  try {
    const { session } = await h.agent()
    const authority = await h.root.sandboxPolicy.authority(session)
    const confine = async (changed) =>
      (await h.root.sandbox.confine(COMMAND, { cwd: h.workspace, authority: { ...authority, ...changed } })).argv
    const full = await confine({})
    const bwrap = full.find((arg) => arg.endsWith('/bwrap'))
    const variants = [
      ['the default: the launcher (perl, outside) → bwrap with the path rules → perl bridge → bash', full],
      [
        'the same as the chain before it: fence wrapper (perl) → /bin/sh joining the cgroups → bwrap → perl bridge → bash setting the rlimits → bash',
        chainOf(full),
      ],
      ['no path rules: nothing fenced', await confine({ paths: undefined })],
      [
        'no path rules, no network: bwrap runs the command itself',
        await confine({ paths: undefined, network: { kind: 'none' } }),
      ],
      ['bare bwrap → bash (reference)', [bwrap, ...BARE_BWRAP, ...COMMAND]],
      ['bare bwrap → true (the load)', [bwrap, ...BARE_BWRAP, 'true']],
    ]
    const times = variants.map(() => [])
    for (let round = 0; round < ROUNDS; round++) {
      for (const at of variants.map((_, i) => i).sort(() => Math.random() - 0.5)) {
        const started = performance.now()
        const result = spawnSync(variants[at][1][0], variants[at][1].slice(1), { cwd: h.workspace })
        times[at].push(performance.now() - started)
        if (at < variants.length - 1 && result.stdout?.toString() !== 'hi\n')
          throw new Error(`${variants[at][0]}: ${result.stderr}`)
      }
    }
    const bare = summarize(times.at(-1)).median
    return [
      '## One confined command (bench/confine)',
      '',
      `\`echo hi\` confined by \`ctx.sandbox\` under a session's real authority (workspace-write in a fresh workspace, the default secret and protected paths, the network proxy), spawned and waited for, ${ROUNDS} rounds, the variants in a random order in each round.`,
      '',
      '| argv | median | p90 | ratio to a bare confined `true` |',
      '|---|---|---|---|',
      ...variants.map(([label], i) => {
        const stats = summarize(times[i])
        return `| ${label} | ${ms(stats.median)} | ${ms(stats.p90)} | ${(stats.median / bare).toFixed(2)}× |`
      }),
    ].join('\n')
  } finally {
    await h.dispose()
  }
}

/** The launcher's argv taken apart (launcher.ts's order) and put together as the chain before it. */
function chainOf(argv) {
  let at = 3
  const wait = Number(argv[at++])
  const groups = Array.from({ length: Number(argv[at++]) }, () => {
    const lock = argv[at++]
    const count = Number(argv[at++])
    return { lock, points: argv.slice(at, (at += count)) }
  })
  at += 1
  at += 3 * Number(argv[at]) + 1
  const procs = argv.slice(at + 1, (at += 1 + Number(argv[at])))
  const events = { ...(argv[at] ? { pids: argv[at] } : {}), ...(argv[at + 1] ? { memory: argv[at + 1] } : {}) }
  const confined = argv.slice(at + 7)
  const inner = confined.slice(confined.indexOf('--') + 1)
  const bridge = inner.slice(0, inner.indexOf('--') + 1)
  const limits = { processes: 4096, fileSize: 8 * 1024 ** 3, memory: 8 * 1024 ** 3, addressSpace: 0, cpuSeconds: 7200 }
  const { outer, inner: limited } = limitedArgv('bash', limits, { procs, events }, COMMAND)
  const chain = [...outer, ...confined.slice(0, confined.indexOf('--') + 1), ...bridge, ...limited]
  return groups.length ? tidiedArgv({ perl: argv[0], waitSeconds: wait, groups }, chain) : chain
}
