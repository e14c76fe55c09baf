// This package's section of the system prompt (docs/prompt.md): what the model should know to use it well.
import type { Context } from '@dsh/cordis'
import { contributeSection } from '@dsh/system-prompt'

export const AUTHORITY_SECTION = `Authority: your commands and file writes run under a sandbox mode (the runtime context says which): read-only, workspace-write (write inside the workspace; .git, .dsh and editor or agent config stay read-only; no network except hosts the user allows) or danger-full-access. Secret paths (keys, credentials, dsh's home) are hidden from you in every mode. When a command needs more, say why and ask for it in the call: bash with sandbox: false and a justification runs once outside the sandbox, writeGit: true makes .git writable for one command; both wait for the user's approval. Do not try to get around a refusal another way.`

/** Adds the section while this plugin is mounted (and a system prompt is). */
export function contributeAuthoritySection(ctx: Context): void {
  contributeSection(ctx, { name: 'authority', order: 40, owner: '@dsh/sandbox-policy', text: AUTHORITY_SECTION })
}
