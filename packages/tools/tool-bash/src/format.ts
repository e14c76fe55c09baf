import type { ShellResult } from '@dsh/shell'
import { commandBlocks, terminalText, truncationNote } from '@dsh/tool-kit'
import { type ToolOutput } from '@dsh/tools'
import { readOnlyGitHint } from './git.ts'

/**
 * A command's outcome as the model reads it (as plain text: `terminalText`): the output, then one bracketed note per fact worth knowing
 * (exit status, truncation, deadline, cancel, confinement). A deadline or a cancel is an error result; a failing exit status is
 * not (the model reads the status and decides).
 */
export function formatResult(
  result: ShellResult,
  options: { timeoutMs: number; unconfined: boolean; writableGit?: boolean; stopped?: boolean },
): ToolOutput {
  const notes: string[] = []
  if (result.truncated) notes.push(truncationNote(result.saved))
  if (result.timedOut)
    notes.push(`[Timed out after ${options.timeoutMs} ms: the command and every process it started were killed.]`)
  else if (result.aborted)
    notes.push(
      `[Interrupted: ${options.stopped ? 'dsh stopped' : 'the call was cancelled'} and the command was killed${result.signal ? ` (${result.signal})` : ''}.]`,
    )
  else if (result.signal) notes.push(`[Killed by ${result.signal}]`)
  else if (result.exitCode !== 0 && result.exitCode !== null) notes.push(`[Exit code ${result.exitCode}]`)
  if (options.unconfined) notes.push('[Ran outside the sandbox, as approved.]')
  else if (options.writableGit) notes.push('[Ran with .git writable, as approved.]')
  const gitHint =
    !options.unconfined && !options.writableGit && result.exitCode !== 0 ? readOnlyGitHint(result.output) : undefined
  if (gitHint) notes.push(gitHint)
  const output = terminalText(result.output).replace(/\n$/, '') // no escape sequences, each redrawn line's last state
  // A saved output keeps its notes apart: spill-policy previews the saved file in place of the output alone.
  const content = result.saved
    ? commandBlocks(output || '(no output)', notes, result.saved)
    : [{ type: 'text' as const, text: [output || '(no output)', ...notes].join('\n') }]
  if (result.timedOut)
    return {
      content,
      error: { code: 'COMMAND_TIMEOUT', message: notes.find((note) => note.startsWith('[Timed out'))! },
    }
  // A cancel is not the command's own ending: every surface shows the call interrupted, with why.
  if (result.aborted)
    return {
      content,
      error: { code: 'ABORTED', message: notes.find((note) => note.startsWith('[Interrupted'))!.slice(1, -1) },
    }
  return result.saved ? { content } : content[0]!.text
}
