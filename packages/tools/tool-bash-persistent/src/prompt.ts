// This package's section of the system prompt (docs/prompt.md): what the model should know to use it well.
import type { Context } from '@dsh/cordis'
import { contributeSection } from '@dsh/system-prompt'

export const SHELL_SECTION = `Shell: bash runs in one persistent shell of yours: cd, exports and functions stay between calls. Use it to build, test, run git and other programs, not to read or edit files a file tool can handle. Output is cut to its head and tail when long: narrow it (grep, tail, --quiet) rather than printing everything.`

/** Adds the section while this plugin is mounted (and a system prompt is). */
export function contributeShellSection(ctx: Context): void {
  contributeSection(ctx, {
    name: 'shell',
    order: 22,
    owner: '@dsh/tool-bash-persistent',
    text: SHELL_SECTION,
    tools: ['bash'],
  })
}
