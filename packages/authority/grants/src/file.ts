import { readFile } from 'node:fs/promises'
import writeFileAtomic from 'write-file-atomic'
import YAML from 'yaml'
import { actorProblem, ruleProblem, type AuthorityActor } from '@dsh/authority-rules'

/** One "always allow in this workspace" grant as grants.yaml keeps it. */
export interface WorkspaceGrant {
  id: string
  rule: string
  actor: AuthorityActor
  /** ISO 8601 time it was added. */
  added: string
  /** The session that made it, if any. */
  session?: string
  /** `hmac-sha256:<hex>` over the entry and its workspace, keyed by dsh's grant key (integrity.ts); absent or wrong: ignored. */
  tag?: string
}

/** grants.yaml: `workspaces: { <real path>: [grant, …] }`. */
export interface GrantsFile {
  workspaces: Record<string, WorkspaceGrant[]>
}

const HEADER =
  '# Standing grants of dsh ("always allow in this workspace"), by workspace real path.\n# Written by dsh (0600); list with `dsh grants list`, remove with `dsh grants revoke <id|rule>`.\n# Each entry carries dsh\'s integrity tag: an entry added or edited by hand is ignored (answer "always" instead).\n'

/**
 * What is wrong with one entry's shape (undefined: nothing). Such an entry is not dsh's (dsh writes none): it is
 * ignored like an untagged one, so a planted line cannot make every genuine grant unusable.
 */
export function entryProblem(grant: unknown): string | undefined {
  const entry = grant as Partial<WorkspaceGrant> | null
  if (!entry || typeof entry !== 'object' || Array.isArray(entry)) return 'an entry must be a mapping'
  return typeof entry.id !== 'string'
    ? 'id must be a string'
    : (ruleProblem(entry.rule, 'rule') ?? actorProblem(entry.actor))
}

/**
 * Reads grants.yaml (absent: no grants). A file that is not YAML or not shaped `workspaces: { path: [entry…] }`
 * throws, naming the file and what is wrong; a malformed entry is kept as it is (entryProblem says why it is
 * ignored) so a rewrite does not drop it silently.
 */
export async function readGrantsFile(file: string): Promise<GrantsFile> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'ENOENT') return { workspaces: {} }
    throw error
  }
  let parsed: any
  try {
    parsed = YAML.parse(text) ?? {}
  } catch (error) {
    throw new Error(`${file}: not valid YAML (${error instanceof Error ? error.message : error})`, { cause: error })
  }
  const workspaces = parsed.workspaces ?? {}
  if (typeof workspaces !== 'object' || Array.isArray(workspaces))
    throw new Error(`${file}: workspaces must be a mapping of workspace path to a list of grants`)
  for (const [workspace, grants] of Object.entries(workspaces)) {
    if (!Array.isArray(grants)) throw new Error(`${file}: workspaces["${workspace}"] must be a list of grants`)
  }
  return { workspaces: workspaces as GrantsFile['workspaces'] }
}

/** Writes grants.yaml atomically (a temporary file renamed over it), readable by its owner only. */
export async function writeGrantsFile(file: string, content: GrantsFile): Promise<void> {
  const workspaces = Object.fromEntries(Object.entries(content.workspaces).filter(([, grants]) => grants.length))
  await writeFileAtomic(file, HEADER + YAML.stringify({ workspaces }), { mode: 0o600 })
}
