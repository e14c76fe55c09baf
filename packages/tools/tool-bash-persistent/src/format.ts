import type { ShellResult } from '@dsh/shell'
import { commandBlocks, terminalText, truncationNote } from '@dsh/tool-kit'
import { type ToolOutput } from '@dsh/tools'

/**
 * A command's outcome as the model reads it (as plain text: `terminalText`): notes about the shell first (a new shell was started), then the
 * output, then one bracketed note per fact (truncation, deadline, exit status). A deadline is an error
 * result; a failing exit status is not.
 */
export function formatResult(
  result: ShellResult,
  options: { timeoutMs: number; unconfined: boolean; before: string[] },
): ToolOutput {
  const notes: string[] = []
  if (result.truncated) notes.push(truncationNote(result.saved))
  if (result.timedOut) {
    notes.push(
      options.unconfined
        ? `[Timed out after ${options.timeoutMs} ms: the command and every process it started were killed.]`
        : `[Timed out after ${options.timeoutMs} ms: the command was interrupted (Ctrl-C). The shell lives on unless the command ignored the interrupt.]`,
    )
  } else if (result.signal) notes.push(`[The shell was ended by ${result.signal}; the next call starts a new one.]`)
  else if (result.exitCode !== 0 && result.exitCode !== null) notes.push(`[Exit code ${result.exitCode}]`)
  if (options.unconfined)
    notes.push(
      "[Ran outside the sandbox, as approved, as a one-shot command in the shell's directory: its variables did not apply and its changes to them do not persist.]",
    )
  const output = terminalText(result.output).replace(/\n$/, '') // no escape sequences, each redrawn line's last state
  // A saved output keeps its notes apart: spill-policy previews the saved file in place of the output alone.
  const content = result.saved
    ? commandBlocks(output || '(no output)', [...options.before, ...notes], result.saved)
    : [{ type: 'text' as const, text: [...options.before, output || '(no output)', ...notes].join('\n') }]
  if (result.timedOut)
    return {
      content,
      error: { code: 'COMMAND_TIMEOUT', message: notes.find((note) => note.startsWith('[Timed out'))! },
    }
  return result.saved ? { content } : content[0]!.text
}

/** `text` as one single-quoted bash word. */
export const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`
