// The terminal UI (bench/tui): the real `dsh` in a pseudo-terminal against the mock model, its screen read through
// @xterm/headless (time to first paint, keypress-to-echo latency, CPU while idle, peak RSS), and the Ink app drawn
// in-process into a counting stream (the cost of one streamed chunk with 0 and 1,000 finished items above it).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough, Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { startMockServer } from '@dsh/llm-mock-server'
import { drive, KEYS } from '@dsh/terminal-driver'
import { startInk } from '@dsh/tui'
import { WITHOUT_AUTO_TITLE } from '@dsh/test-harness'
import { ms, summarize } from '../stats.mjs'

const repo = join(fileURLToPath(import.meta.url), '../../..')
const dshBin = join(repo, 'apps/cli/bin/dsh.js')
const KEYPRESSES = 30
const CHUNKS = 200
const FINISHED = 1000

/** CPU seconds (user + system) a process has used, from /proc. */
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}
const peakRssMiB = (pid) => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024

async function terminalFigures() {
  const home = mkdtempSync(join(tmpdir(), 'dsh-bench-tui-home-'))
  const workspace = mkdtempSync(join(tmpdir(), 'dsh-bench-tui-repo-'))
  const llm = await startMockServer()
  writeFileSync(join(home, 'extra.patch.yml'), WITHOUT_AUTO_TITLE)
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    DSH_HOME: home,
    TERM: 'xterm-256color',
    DEEPSEEK_BASE_URL: llm.url,
    DEEPSEEK_API_KEY: 'bench-key-for-the-mock-server',
  }
  try {
    const started = performance.now()
    const t = drive(process.execPath, [dshBin, 'tui', '--patch', join(home, 'extra.patch.yml')], {
      cwd: workspace,
      env,
      cols: 100,
      rows: 30,
    })
    await t.waitFor('dsh · deepseek/', 'the first paint')
    const firstPaint = performance.now() - started
    // Each key is sent once the previous one is on the screen.
    const echo = []
    let typed = ''
    for (let i = 0; i < KEYPRESSES; i++) {
      const key = String.fromCharCode(97 + (i % 26))
      typed += key
      const sent = performance.now()
      t.type(key)
      await t.waitFor(() => t.screen().some((row) => row.startsWith(`› ${typed}`)), `echo of key ${i}`)
      echo.push(performance.now() - sent)
    }
    t.type('\x15') // Ctrl+U clears the input
    await t.waitFor(() => t.screen().some((row) => /^›\s*$/.test(row)), 'the cleared input')
    // A turn, so the session, the model adapter and the tools have been used before the idle window.
    llm.enqueue({ text: 'Ready.' })
    t.type('warm up')
    await t.waitFor('› warm up', 'the typed prompt')
    t.type(KEYS.enter)
    await t.waitFor('── done', 'the answer')
    // Two windows: the first still holds the turn's aftermath (the search index, the collector), the second is idle.
    const window = async () => {
      const before = cpuSeconds(t.pty.pid)
      await new Promise((resolve) => setTimeout(resolve, 2000))
      return cpuSeconds(t.pty.pid) - before
    }
    const afterTurnCpu = await window()
    const idleCpu = await window()
    const rss = peakRssMiB(t.pty.pid)
    t.type(KEYS.ctrlD)
    const exit = await t.exited
    if (exit.exitCode !== 0) throw new Error(`dsh tui exited ${exit.exitCode}`)
    await t.dispose()
    return { firstPaint, echo: summarize(echo), afterTurnCpu, idleCpu, rss }
  } finally {
    await llm.close()
    rmSync(home, { recursive: true, force: true })
    rmSync(workspace, { recursive: true, force: true })
  }
}

/** A stand-in for the controller with `finished` entries in the scrollback and one answer streaming below. */
function store(finished) {
  const listeners = new Set()
  const entries = Array.from({ length: finished }, (_, i) => ({
    key: `e${i}`,
    lines: [
      { text: `› message ${i}` },
      { text: `✓ bash: echo ${i} (12ms · exit 0)`, tone: 'tool' },
      { text: `  │ ${i}`, tone: 'muted' },
    ],
  }))
  let text = ''
  const snapshot = () => ({
    entries,
    live: [{ kind: 'assistant', key: 'a', version: 1, seq: 1, text, reasoning: '', streaming: true }],
    approval: undefined,
    running: true,
    planMode: false,
    sessionId: 'bench',
    route: 'deepseek/bench',
    picker: undefined,
    exitArmed: false,
  })
  let current = snapshot()
  return {
    subscribe: (fn) => (listeners.add(fn), () => listeners.delete(fn)),
    getSnapshot: () => current,
    lineOptions: { outputLines: 8, diffLines: 12, summaryChars: 100, describe: (name) => name, now: () => Date.now() },
    commands: () => [],
    history: { entries: [] },
    chunk(piece) {
      text += piece
      current = snapshot()
      for (const fn of listeners) fn()
    },
  }
}

async function redrawFigures(finished) {
  const controller = store(finished)
  let bytes = 0
  const stdout = Object.assign(
    new Writable({
      write(chunk, _encoding, done) {
        bytes += chunk.length
        done()
      },
    }),
    { isTTY: true, columns: 100, rows: 30 },
  )
  const stdin = Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => {}, ref: () => {}, unref: () => {} })
  let rendered
  const times = []
  const stop = startInk(
    controller,
    { completionRows: 8, maxFps: 10_000 },
    { stdin, stdout, stderr: stdout },
    {
      env: {},
      onRender: ({ renderTime }) => {
        times.push(renderTime)
        rendered?.()
      },
    },
  )
  await new Promise((resolve) => setTimeout(resolve, 50)) // the first paint, the scrollback written
  const perChunk = []
  const bytesPerChunk = []
  for (let i = 0; i < CHUNKS; i++) {
    const wrote = bytes
    const started = performance.now()
    const done = new Promise((resolve) => (rendered = resolve))
    controller.chunk(i % 12 === 11 ? 'word\n' : 'word ')
    await done
    perChunk.push(performance.now() - started)
    bytesPerChunk.push(bytes - wrote)
  }
  stop()
  return { wall: summarize(perChunk), render: summarize(times.slice(-CHUNKS)), bytes: summarize(bytesPerChunk) }
}

export default async function run() {
  const t = await terminalFigures()
  const empty = await redrawFigures(0)
  const full = await redrawFigures(FINISHED)
  const row = (label, r) =>
    `| ${label} | ${ms(r.wall.median)} | ${ms(r.wall.p90)} | ${ms(r.render.median)} | ${r.bytes.median} B | ${r.bytes.max} B |`
  return [
    '## Terminal UI (bench/tui)',
    '',
    `\`dsh tui\` in a 100×30 pseudo-terminal (node-pty), its screen read through @xterm/headless, against \`@dsh/llm-mock-server\`.`,
    '',
    '| measure | value |',
    '|---|---|',
    `| time to first paint (spawn → status line on screen) | ${ms(t.firstPaint)} |`,
    `| keypress → echo on screen, median / p90 / max of ${KEYPRESSES} | ${ms(t.echo.median)} / ${ms(t.echo.p90)} / ${ms(t.echo.max)} |`,
    `| CPU in the 2 s right after a turn | ${(t.afterTurnCpu * 1000).toFixed(0)} ms |`,
    `| CPU while idle, the next 2 s | ${(t.idleCpu * 1000).toFixed(0)} ms |`,
    `| peak RSS | ${t.rss.toFixed(1)} MiB |`,
    '',
    `One streamed chunk (a word appended to the answer being streamed), drawn by the Ink app in-process into a counting stream, ${CHUNKS} chunks, each awaited until Ink has drawn it: the time from the store's change to Ink's render, and the bytes written to the terminal. The finished items are in the scrollback (\`<Static>\`), so neither should grow with them.`,
    '',
    '| finished items above | change → drawn, median | p90 | Ink render time, median | bytes per chunk, median | max |',
    '|---|---|---|---|---|---|',
    row('0', empty),
    row(String(FINISHED), full),
  ].join('\n')
}
