import { createHmac, timingSafeEqual } from 'node:crypto'
import { ensureSecretKey, readSecretKey } from '@dsh/secret-key'
import type { WorkspaceGrant } from './file.ts'

// A grant is something dsh wrote (docs/security.md, "Standing grants"): each grants.yaml entry carries an
// HMAC-SHA256 tag keyed by a secret in $DSH_HOME that confined commands and the file tools cannot read
// (it is a secret path of sandbox-policy), so an entry written by anything else is recognised and ignored.

export const TAG_PREFIX = 'hmac-sha256:'

/**
 * What a tag covers: the workspace it is kept under and every field of the entry, so an entry copied to
 * another workspace, or with its rule or actor changed, no longer matches.
 */
export function canonicalGrant(workspace: string, grant: WorkspaceGrant): string {
  return JSON.stringify([
    'dsh-grant/1',
    workspace,
    grant.id,
    grant.rule,
    grant.actor,
    grant.added,
    grant.session ?? null,
  ])
}

export function grantTag(key: Buffer, workspace: string, grant: WorkspaceGrant): string {
  return TAG_PREFIX + createHmac('sha256', key).update(canonicalGrant(workspace, grant)).digest('hex')
}

/** Why an entry is not dsh's own (undefined: its tag is valid). `key` undefined: no key was ever made here. */
export function tagProblem(
  key: Buffer | undefined,
  keyFile: string,
  workspace: string,
  grant: WorkspaceGrant,
): string | undefined {
  const tag: unknown = grant.tag
  if (tag === undefined)
    return 'it has no integrity tag: not written by this dsh (an older dsh or a hand edit): re-approve it'
  if (!key) return `its integrity tag cannot be checked: this dsh's grant key ${keyFile} is missing: re-approve it`
  const expected = Buffer.from(grantTag(key, workspace, grant))
  const given = Buffer.from(typeof tag === 'string' ? tag : '')
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return 'its integrity tag does not match: not written by this dsh (edited, copied from another workspace, or made with another key): re-approve it'
  return undefined
}

const CONSEQUENCE = 'every "always" grant is then ignored until approved again'

/** The key, or undefined when none was made yet. A key file of the wrong shape is an error naming it. */
export const readGrantKey = (file: string): Promise<Buffer | undefined> => readSecretKey(file, CONSEQUENCE)

/** The key, made on first use (0600, O_EXCL: two processes starting at once agree on one). */
export const ensureGrantKey = (file: string): Promise<Buffer> => ensureSecretKey(file, CONSEQUENCE)
