// How each display item reads on a terminal, as plain lines with a tone: the Ink transcript colours them, the
// plain mode prints them as they are. Pure functions of the items `@dsh/session-view` folds (the one display
// fold, docs/architecture.md "Surfaces"): nothing here reads the log itself.
import type { Item, ProposedChange, ToolItem } from '@dsh/session-view'
import { duration, head, oneLine, printable, tail, tokens } from './text.ts'

export type Tone = 'user' | 'muted' | 'ok' | 'error' | 'warn' | 'tool' | 'add' | 'del' | 'accent'

export interface Line {
  text: string
  tone?: Tone
  bold?: boolean
}

export interface LineOptions {
  /** Lines of command output a card keeps (the tail). */
  outputLines: number
  /** Lines of a diff a card keeps (the head). */
  diffLines: number
  /** Characters of a call's one-line summary. */
  summaryChars: number
  /** The one-line summary of a call (the tool's own `summarize`, else its first string argument). */
  describe(name: string, args: unknown): string
  /** Now, for the duration of a call still running. */
  now(): number
}

export function itemLines(item: Item, options: LineOptions): Line[] {
  switch (item.kind) {
    case 'user':
      return printable(item.text || (item.images.length ? `(${item.images.length} image)` : ''))
        .split('\n')
        .map((text, i) => ({ text: `${i === 0 ? '› ' : '  '}${text}`, tone: 'user' as const, bold: true }))
    case 'assistant': {
      const out: Line[] = []
      if (item.reasoning.trim()) {
        const count = item.reasoning.trim().split('\n').length
        out.push({
          text: `∴ thinking${item.streaming && !item.text ? '…' : ''} (${count} line${count === 1 ? '' : 's'}, folded)`,
          tone: 'muted',
        })
      }
      if (item.text) for (const text of printable(item.text).replace(/\n+$/, '').split('\n')) out.push({ text })
      if (item.error) out.push({ text: `✗ ${oneLine(item.error.message, 400)} (${item.error.code})`, tone: 'error' })
      if (item.interrupted) out.push({ text: '(interrupted)', tone: 'warn' })
      return out
    }
    case 'tool':
      return toolLines(item, options)
    case 'approval': {
      const decided = item.approval.decided
      return [
        {
          text: `? ${oneLine(item.approval.summary, options.summaryChars)}${decided ? ` — ${answerText(decided.answer)} by ${decided.by}` : ' — waiting for an answer'}`,
          tone: decided?.answer === 'reject' ? 'error' : 'accent',
        },
      ]
    }
    case 'notice':
      return printable(item.text)
        .split('\n')
        .map((text) => ({ text: `· ${text}`, tone: item.tone === 'warn' ? ('warn' as const) : ('muted' as const) }))
    case 'turn-end': {
      const took = item.startedAt !== undefined ? ` in ${duration(item.endedAt - item.startedAt)}` : ''
      const usage = `${tokens(item.usage.input + item.usage.cacheRead + item.usage.cacheWrite)} in, ${tokens(item.usage.output)} out`
      if (item.reason === 'completed') return [{ text: `── done${took} · ${usage}`, tone: 'muted' }]
      if (item.reason === 'aborted') return [{ text: `── turn interrupted${took}`, tone: 'warn' }]
      const error = item.error ? `: ${oneLine(item.error.message, 400)} (${item.error.code})` : ''
      return [{ text: `── turn ${item.reason}${took}${error}`, tone: 'error' }]
    }
    case 'subagent': {
      const ended = item.endedAt !== undefined ? ` in ${duration(item.endedAt - item.startedAt)}` : ''
      return [
        {
          text: `⤷ ${item.agentType} subagent: ${oneLine(item.description, options.summaryChars)} — ${item.status}${ended}`,
          tone: item.status === 'failed' ? 'error' : 'tool',
        },
        ...(item.error ? [{ text: `  ${oneLine(item.error.message, 400)}`, tone: 'error' as const }] : []),
      ]
    }
  }
}

const MARKS: Record<ToolItem['status'], string> = {
  pending: '○',
  running: '◌',
  done: '✓',
  error: '✗',
  interrupted: '⊘',
}

function toolLines(item: ToolItem, options: LineOptions): Line[] {
  const took = duration((item.endedAt ?? options.now()) - item.startedAt)
  const ending = item.ending ? ` · ${item.ending}` : item.name === 'bash' && item.status === 'done' ? ' · exit 0' : ''
  const state = item.status === 'running' || item.status === 'pending' ? ` · ${item.status}` : ''
  const out: Line[] = [
    {
      text: `${MARKS[item.status]} ${oneLine(options.describe(item.name, item.args), options.summaryChars)} (${took}${ending}${state})`,
      tone: item.status === 'error' ? 'error' : item.status === 'interrupted' ? 'warn' : 'tool',
      bold: true,
    },
  ]
  if (item.approval && !item.approval.decided) out.push({ text: '  waiting for your answer', tone: 'accent' })
  if (item.change && item.changeState !== 'refused') out.push(...changeLines(item.change, options.diffLines))
  else if (item.change) out.push({ text: `  refused — not applied: ${item.change.path}`, tone: 'muted' })
  // A command's output as it printed it (live), else the result; other tools' results are not repeated in full.
  const printed = item.printed?.text ?? (item.name === 'bash' ? item.output : undefined)
  if (printed?.trim())
    for (const text of tail(printable(printed), options.outputLines)) out.push({ text: `  │ ${text}`, tone: 'muted' })
  if (item.error && item.status !== 'interrupted')
    out.push({ text: `  ${oneLine(item.error.message, 400)} (${item.error.code})`, tone: 'error' })
  return out
}

/** A compact diff of what an edit or write proposes: removed and added lines, the first few of each hunk. */
export function changeLines(change: ProposedChange, max: number): Line[] {
  const out: Line[] = []
  const push = (prefix: '-' | '+', text: string, budget: number) => {
    for (const line of head(printable(text), budget))
      out.push({ text: `  ${prefix} ${line}`, tone: prefix === '-' ? 'del' : 'add' })
  }
  if (change.kind === 'write') {
    const count = change.content.replace(/\n$/, '').split('\n').length
    out.push({ text: `  write ${printable(change.path)} (${count} line${count === 1 ? '' : 's'})`, tone: 'muted' })
    push('+', change.content, max)
  } else if (change.kind === 'insert') {
    out.push({
      text: `  insert into ${printable(change.path)}${change.line !== undefined ? ` after line ${change.line}` : ''}`,
      tone: 'muted',
    })
    push('+', change.text, max)
  } else {
    out.push({
      text: `  edit ${printable(change.path)}${change.replaceAll ? ' (every occurrence)' : ''}`,
      tone: 'muted',
    })
    for (const edit of change.edits.slice(0, max)) {
      push('-', edit.oldText, Math.max(1, Math.floor(max / 2)))
      push('+', edit.newText, Math.max(1, Math.floor(max / 2)))
    }
    if (change.edits.length > max) out.push({ text: `  … ${change.edits.length - max} more edits`, tone: 'muted' })
  }
  return out
}

export function answerText(answer: string): string {
  return answer === 'allow_once'
    ? 'allowed once'
    : answer === 'allow_session'
      ? 'allowed for this session'
      : answer === 'allow_always'
        ? 'always allowed here'
        : 'rejected'
}

/** A call the fold says another item shows (`shownBy`: a `task` call, shown as its subagent's card). */
export const drawnElsewhere = (item: Item): boolean => item.kind === 'tool' && item.shownBy !== undefined

/** Whether an item will not change any more (written once to the scrollback). */
export function finished(item: Item): boolean {
  if (drawnElsewhere(item)) return true
  switch (item.kind) {
    case 'assistant':
      return !item.streaming
    case 'tool':
      return item.status !== 'running' && item.status !== 'pending'
    case 'approval':
      return item.approval.decided !== undefined
    case 'subagent':
      return item.status !== 'running'
    default:
      return true
  }
}
