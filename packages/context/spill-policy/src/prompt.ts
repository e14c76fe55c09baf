// This package's section of the system prompt (docs/prompt.md): what the model should know to use it well.
import type { Context } from '@dsh/cordis'
import { contributeSection } from '@dsh/system-prompt'

export const LARGE_OUTPUT_SECTION = `Large results: a tool result too large for the conversation is saved to a file; you see its head and tail and the file's path. Read the parts you need from that file (read with offset and limit, or grep it) instead of running the command again.`

/** Adds the section while this plugin is mounted (and a system prompt is). */
export function contributeLargeOutputSection(ctx: Context): void {
  contributeSection(ctx, { name: 'large-output', order: 50, owner: '@dsh/spill-policy', text: LARGE_OUTPUT_SECTION })
}
