// One confined command, taken apart (bench/confine, issue #29.2): the argv `ctx.sandbox` makes for `echo hi`
// under a session's real authority (workspace-write, the default secret and protected paths, the proxy),
// spawned and waited for, next to the same argv with one layer taken off at a time. The variants run in a
// random order in each round, so the machine's load falls on all of them alike; the bare confined `true` is
// the measure of that load.
import { spawnSync } from 'node:child_process'
import { bootComposition } from '@dsh/test-harness'
import { BARE_BWRAP, ms, summarize } from '../stats.mjs'

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
      [
        'the default: fence wrapper (perl, outside) → bwrap with the path rules → perl launcher and bridge → bash',
        full,
      ],
      ['no path rules: nothing fenced, so no fence wrapper', await confine({ paths: undefined })],
      [
        'no path rules, no network: the bash launcher closes descriptors',
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
        if (at < 4 && result.stdout?.toString() !== 'hi\n') throw new Error(`${variants[at][0]}: ${result.stderr}`)
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
