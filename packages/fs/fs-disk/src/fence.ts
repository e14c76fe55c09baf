import { realpath } from 'node:fs/promises'
import { isAbsolute } from 'node:path'
import { FsError, type FenceReason } from '@dsh/fs'
import { isInside, requireAbsolute, resolveEntryPath, resolveRealPath } from './local/paths.ts'
import type { DirectoryGuard } from './local/write.ts'
import { SANDBOX_MODES, type SandboxAuthority } from '@dsh/sandbox'
import { coveringRule, ruleBase, within } from '@dsh/sandbox-rules'

/** What a write does, in the words of the refusal the model reads. */
export type WriteKind = 'write' | 'create directory' | 'remove' | 'rename' | 'rename onto'

/**
 * How the last name of a path is treated: `through` follows a link to where a write lands (writing a file,
 * creating a directory); `entry` acts on the link itself (remove, rename).
 */
export type Reach = 'through' | 'entry'

export interface Admission {
  /** The real path the operation acts on. */
  target: string
  /** Re-checks a directory right before an effect in it; absent when nothing is fenced. */
  guard?: DirectoryGuard
}

function describeRoots(roots: readonly string[]): string {
  return roots.length ? roots.map((root) => `"${root}"`).join(', ') : 'none'
}

function deny(kind: WriteKind, path: string, why: string, reason: FenceReason = 'outside', rule?: string): FsError {
  return new FsError('FS_SANDBOX_DENIED', path, `Refused to ${kind} "${path}": ${why}. Nothing was changed.`, {
    fence: { reason, ...(rule ? { rule } : {}) },
  })
}

/** The secret-path rule covering `real` (the real path), unless it lies in one of the read exceptions. */
function secretRule(authority: SandboxAuthority, real: string) {
  const paths = authority.paths
  if (!paths) return undefined
  if (paths.readExceptions.some((dir) => within(real, dir))) return undefined
  return coveringRule(paths.denyRead, real)
}

/** Whether a listed entry (by its path, not resolved) is a secret one, to leave out of a listing or a walk. */
export function secretEntry(authority: SandboxAuthority, path: string): boolean {
  return secretRule(authority, path) !== undefined
}

/**
 * The read fence (docs/security.md): refuses, with FS_READ_DENIED naming the rule, a read for the model of a path
 * whose real path (or the path as given) a secret rule covers, in every mode. A link into a secret folder is
 * resolved first, so it is refused too. Returns the real path that may be opened.
 */
export async function admitRead(path: string, authority: SandboxAuthority): Promise<string> {
  requireAbsolute(path)
  const real = await resolveRealPath(path)
  const rule = secretRule(authority, real) ?? secretRule(authority, path)
  if (rule) {
    const resolvedNote = real === path ? '' : ` (it resolves to "${real}")`
    throw new FsError(
      'FS_READ_DENIED',
      path,
      `"${path}"${resolvedNote} is a secret path (rule ${rule.rule}): file tools never read it and confined commands cannot see it`,
      {
        fence: { reason: 'secret', rule: rule.rule },
      },
    )
  }
  return real
}

/** Refuses a write onto (or, removing or moving a folder, over) a protected path, naming the rule. */
function refusePathRules(
  kind: WriteKind,
  path: string,
  target: string,
  authority: SandboxAuthority,
  reach: Reach,
): void {
  const rules = authority.paths?.protect ?? []
  const protectedBy =
    coveringRule(rules, target) ??
    // Removing or moving a folder takes what is inside it: a protected path beneath counts too.
    (reach === 'entry'
      ? rules.find((rule) => within(ruleBase(rule.pattern), target) && ruleBase(rule.pattern) !== target)
      : undefined)
  if (protectedBy) {
    const resolvedNote = target === path ? '' : ` (it resolves to "${target}")`
    throw new FsError(
      'FS_PROTECTED',
      path,
      `Refused to ${kind} "${path}"${resolvedNote}: it is a protected path (rule ${protectedBy.rule}), read-only inside the writable roots because something outside the sandbox runs or obeys it. Nothing was changed`,
      { fence: { reason: 'protected', rule: protectedBy.rule } },
    )
  }
}

/** The roots that exist, symlinks resolved. A root that is missing or relative fences nothing in (fail closed). */
async function realRoots(roots: readonly string[]): Promise<string[]> {
  const real = await Promise.all(
    roots.map((root) =>
      typeof root === 'string' && isAbsolute(root) ? realpath(root).catch(() => undefined) : undefined,
    ),
  )
  return real.filter((root): root is string => root !== undefined)
}

/**
 * The write fence (docs/security.md), shared by every fenced fs provider (fs-fenced, fs-acp) so the security check
 * exists once. Decides whether `authority` lets `kind` touch `path`, before anything is changed. In workspace-write the
 * path is resolved the way the kernel will resolve it (links and `..` included) and must land inside a
 * writable root; the returned guard repeats the check on each directory right before the effect in it.
 */
export async function admit(
  kind: WriteKind,
  path: string,
  authority: SandboxAuthority,
  reach: Reach,
): Promise<Admission> {
  const mode = authority?.mode
  if (!SANDBOX_MODES.includes(mode))
    throw deny(kind, String(path), `no valid sandbox authority was given (mode ${JSON.stringify(mode)})`)
  requireAbsolute(path)
  const given = Array.isArray(authority.writableRoots) ? authority.writableRoots : []
  if (mode === 'read-only')
    throw deny(
      kind,
      path,
      `the sandbox mode is read-only, which allows no writes (writable roots: ${describeRoots(given)})`,
      'mode',
    )
  const target = reach === 'through' ? await resolveRealPath(path) : await resolveEntryPath(path)
  if (mode === 'danger-full-access') return { target }

  const roots = await realRoots(given)
  // Read exceptions are for reading back: a secret folder is never written, not even where it may be read.
  const secret = coveringRule(authority.paths?.denyRead, target) ?? coveringRule(authority.paths?.denyRead, path)
  if (secret)
    throw deny(kind, path, `it is a secret path (rule ${secret.rule}), which no tool writes`, 'secret', secret.rule)
  const resolvedNote = target === path ? '' : ` (it resolves to "${target}")`
  if (!roots.some((root) => isInside(root, target))) {
    throw deny(
      kind,
      path,
      `the path${resolvedNote} is outside the writable roots of the sandbox mode workspace-write (${describeRoots(given)})`,
    )
  }
  if (reach === 'entry' && roots.includes(target)) {
    throw deny(
      kind,
      path,
      `it is a writable root itself, which the sandbox mode workspace-write does not let go (writable roots: ${describeRoots(given)})`,
      'mode',
    )
  }
  refusePathRules(kind, path, target, authority, reach)
  const guard: DirectoryGuard = async (dir) => {
    const now = await realpath(dir).catch(() => undefined)
    if (now !== dir || !roots.some((root) => isInside(root, now))) {
      throw deny(
        kind,
        path,
        `the directory "${dir}" changed while the write was prepared (it now resolves to ${now ? `"${now}"` : 'nothing'}), outside the writable roots of the sandbox mode workspace-write (${describeRoots(given)})`,
      )
    }
  }
  return { target, guard }
}
