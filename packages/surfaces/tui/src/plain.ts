// Plain mode (`--plain`, `TERM=dumb`, no terminal): for screen readers and dumb terminals. Finished items are
// printed as lines once, nothing is redrawn, input is read a line at a time.
import { createInterface } from 'node:readline'
import type { TuiController } from './controller.ts'
import { oneLine } from './text.ts'

export function startPlain(
  controller: TuiController,
  stdin: NodeJS.ReadableStream,
  stdout: NodeJS.WritableStream,
): () => void {
  let printed = 0
  let asked: unknown
  let picker: unknown
  const print = () => {
    const snap = controller.getSnapshot()
    for (const entry of snap.entries.slice(printed)) for (const line of entry.lines) stdout.write(`${line.text}\n`)
    printed = snap.entries.length
    if (snap.approval && snap.approval !== asked) {
      asked = snap.approval
      const { request } = snap.approval
      stdout.write(
        `Allow ${oneLine(request.summary, 400)}? y once${request.rule ? `, s this session, a always (${oneLine(request.rule, 200)})` : ''}, n reject\n`,
      )
    }
    if (snap.picker && snap.picker !== picker) {
      picker = snap.picker
      stdout.write('Resume which session? Type its number (empty: a new session).\n')
      snap.picker.forEach((row, i) =>
        stdout.write(
          `${i + 1}. ${oneLine(row.title ?? row.firstPrompt ?? '(no prompt)', 60)} · ${row.turns} turns · ${row.id}\n`,
        ),
      )
    }
  }
  const unsubscribe = controller.subscribe(print)
  const lines = createInterface({ input: stdin, terminal: false })
  lines.on('line', (line) => {
    const snap = controller.getSnapshot()
    const text = line.trim()
    if (snap.picker) {
      const row = snap.picker[Number(text) - 1]
      if (row)
        void controller.openSession(row.id).catch((error) => controller.note(String(error?.message ?? error), 'error'))
      else controller.closePicker()
      return
    }
    if (snap.approval) {
      const answer = ({ y: 'allow_once', s: 'allow_session', a: 'allow_always', n: 'reject' } as const)[text[0] as 'y']
      if (answer) controller.answer(answer)
      else stdout.write('Answer y, s, a or n.\n')
      return
    }
    void controller.submit(line).catch((error) => controller.note(String(error?.message ?? error), 'error'))
  })
  // End of input is the user leaving, as Ctrl+D is in the full UI.
  let stopped = false
  lines.on('close', () => stopped || controller.exit())
  stdout.write('dsh — plain mode: type a message and press Enter; /help lists the commands; end of input exits.\n')
  return () => {
    stopped = true
    unsubscribe()
    lines.close()
  }
}
