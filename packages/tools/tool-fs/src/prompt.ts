// This package's section of the system prompt (docs/prompt.md): what the model should know to use it well.
import type { Context } from '@dsh/cordis'
import { contributeSection } from '@dsh/system-prompt'

export const FILES_SECTION = `Files: read shows numbered lines (the number and tab are not part of the file). Paths are relative to the working directory unless absolute.`

// Apart from FILES_SECTION so that an agent offered read alone (agent preset explore) is not told about edit and write.
export const FILE_CHANGES_SECTION = `Change part of a file with edit, copying old_string from what you read; create a file or rewrite all of it with write. A file must be read before it is edited, and read again if it changed since.`

/** Adds the section while this plugin is mounted (and a system prompt is). */
export function contributeFilesSection(ctx: Context): void {
  contributeSection(ctx, { name: 'files', order: 20, owner: '@dsh/tool-fs', text: FILES_SECTION, tools: ['read'] })
  contributeSection(ctx, {
    name: 'files-change',
    order: 20,
    owner: '@dsh/tool-fs',
    text: FILE_CHANGES_SECTION,
    tools: ['edit', 'write'],
  })
}
