import type { Context } from '@dsh/cordis'
import type { SavedOutput } from '@dsh/shell'
import type {} from '@dsh/spill'
import type { ToolContext } from '@dsh/tools'

/**
 * Where a bash call's whole output may stream once it passes the shell's cap: the spill store's file for
 * the call (spill-policy then previews that file, every byte of it), or nowhere when no store is mounted.
 */
export function fullOutputPath(ctx: Context, context: ToolContext): string | undefined {
  return ctx.get('spillStore')?.fileFor(context.session.id, context.callId)
}

/** The shell option that streams a call's printed output to the pipeline's live log (`tool/output`), when it is on. */
export function liveOutput(context: ToolContext): { onOutput?: (text: string) => void } {
  return context.liveOutput ? { onOutput: context.liveOutput } : {}
}

/** The note of a capped output: where every byte is when the shell saved it, else how to keep it. */
export function truncationNote(saved: SavedOutput | undefined): string {
  if (!saved)
    return '[Output truncated: only its head and tail are shown, the middle is marked "bytes cut". Redirect long output to a file and read or grep it.]'
  if (saved.failure)
    return `[Output truncated: only its head and tail are shown. Saving the whole output failed (${saved.failure}); redirect it to a file and read or grep it.]`
  const what = saved.complete
    ? `all ${saved.bytes} bytes of it`
    : `its first ${saved.bytes} bytes (the ceiling; the rest was not kept)`
  return `[Output truncated here; ${what} saved at ${saved.path}: read it with offset and limit, or grep it.]`
}

/**
 * A command result's text blocks: one text, or — when the shell saved the whole output — the output first
 * and the notes apart, so spill-policy can put the saved file's preview in place of the first block alone.
 */
export function commandBlocks(
  output: string,
  notes: string[],
  saved: SavedOutput | undefined,
): { type: 'text'; text: string }[] {
  if (!saved || saved.failure || !notes.length) return [{ type: 'text', text: [output, ...notes].join('\n') }]
  return [
    { type: 'text', text: output },
    { type: 'text', text: `\n${notes.join('\n')}` }, // a newline of its own: surfaces join blocks as they are
  ]
}
