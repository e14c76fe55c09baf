// Plain mode (`--plain`, `TERM=dumb`, no terminal): for screen readers and dumb terminals. Finished items are
// printed as lines once, nothing is redrawn, and input is read a line at a time. Lines typed ahead wait: the
// next one answers an approval when one is asked, else it is sent once the turn before it has ended; the end
// of input leaves once everything before it is done.
import { createInterface } from 'node:readline'
import type { ApprovalAnswer } from '@dsh/approval'
import type { TuiController } from './controller.ts'
import { oneLine } from './text.ts'

const ANSWERS: Record<string, ApprovalAnswer> = { y: 'allow_once', s: 'allow_session', a: 'allow_always', n: 'reject' }

export function startPlain(
  controller: TuiController,
  stdin: NodeJS.ReadableStream,
  stdout: NodeJS.WritableStream,
): () => void {
  let printed = 0
  let asked: unknown
  let picker: unknown
  const queue: string[] = []
  let busy = false
  let ended = false
  let stopped = false
  const fail = (error: unknown) => controller.note(error instanceof Error ? error.message : String(error), 'error')

  const pump = () => {
    if (stopped) return
    const snap = controller.getSnapshot()
    if (snap.approval) {
      const line = queue.shift()
      if (line === undefined) return
      const answer = ANSWERS[line.trim()[0] ?? '']
      if (answer) controller.answer(answer)
      else stdout.write('Answer y, s, a or n.\n')
      return pump()
    }
    if (snap.picker) {
      const line = queue.shift()
      if (line === undefined) return
      const row = snap.picker[Number(line.trim()) - 1]
      if (row) controller.openSession(row.id).catch(fail).finally(pump)
      else controller.closePicker()
      return
    }
    if (busy) return
    const line = queue.shift()
    if (line === undefined) {
      if (ended) controller.exit()
      return
    }
    busy = true
    void controller
      .submit(line)
      .then(() => controller.whenIdle())
      .catch(fail)
      .finally(() => {
        busy = false
        pump()
      })
  }

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
      stdout.write('Resume which session? Type its number (anything else: a new session).\n')
      snap.picker.forEach((row, i) =>
        stdout.write(
          `${i + 1}. ${oneLine(row.title ?? row.firstPrompt ?? '(no prompt)', 60)} · ${row.turns} turns · ${row.id}\n`,
        ),
      )
    }
    pump()
  }
  const unsubscribe = controller.subscribe(print)
  const lines = createInterface({ input: stdin, terminal: false })
  lines.on('line', (line) => {
    queue.push(line)
    pump()
  })
  lines.on('close', () => {
    ended = true
    pump()
  })
  stdout.write('dsh — plain mode: type a message and press Enter; /help lists the commands; end of input exits.\n')
  return () => {
    stopped = true
    unsubscribe()
    lines.close()
  }
}
