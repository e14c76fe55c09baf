// This package's section of the system prompt (docs/prompt.md): what the model should know to use it well.
import type { Context } from '@dsh/cordis'
import { contributeSection } from '@dsh/system-prompt'

export const EDITOR_SECTION = `Editor: str_replace_editor views files with line numbers and changes them (create, str_replace, insert). View a file before changing it; old_str must match the file exactly and once. undo_edit puts back the file before your last change of it.`

/** Adds the section while this plugin is mounted (and a system prompt is). */
export function contributeEditorSection(ctx: Context): void {
  contributeSection(ctx, {
    name: 'editor',
    order: 23,
    owner: '@dsh/tool-str-replace-editor',
    text: EDITOR_SECTION,
    tools: ['str_replace_editor'],
  })
}
