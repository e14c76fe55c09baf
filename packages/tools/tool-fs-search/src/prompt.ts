// This package's section of the system prompt (docs/prompt.md): what the model should know to use it well.
import type { Context } from '@dsh/cordis'
import { contributeSection } from '@dsh/system-prompt'

export const SEARCH_SECTION = `Searching: glob finds files by name, grep finds text in files (ripgrep regular expressions); both skip .git, hidden and ignored files unless include_ignored is true, and list the most recently changed files first. Start broad, then narrow with path or glob; prefer them to find, ls -R or grep in the shell.`

/** Adds the section while this plugin is mounted (and a system prompt is). */
export function contributeSearchSection(ctx: Context): void {
  contributeSection(ctx, {
    name: 'search',
    order: 21,
    owner: '@dsh/tool-fs-search',
    text: SEARCH_SECTION,
    tools: ['glob', 'grep'],
  })
}
