// This package's section of the system prompt (docs/prompt.md): what the model should know to use it well.
import type { Context } from '@dsh/cordis'
import { contributeSection } from '@dsh/system-prompt'

export const APPROVALS_SECTION = `Approvals: some calls wait for a person (an unconfined command, a write outside the workspace, a new network host). The call's summary and your justification are what they see, so make them clear. A rejected call (APPROVAL_REJECTED) means no: do not retry it or reach the same effect another way; continue without it or ask the user what they want.`

/** Adds the section while this plugin is mounted (and a system prompt is). */
export function contributeApprovalsSection(ctx: Context): void {
  contributeSection(ctx, { name: 'approvals', order: 45, owner: '@dsh/approval', text: APPROVALS_SECTION })
}
