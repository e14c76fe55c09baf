import { FsIoConfig } from '@dsh/fs'
import { DiskFs, resolveEntryPath, resolveRealPath, type Admission, type Reach, type WriteKind } from '@dsh/fs-disk'
import type { SandboxAuthority } from '@dsh/sandbox'

export type Config = FsIoConfig

/**
 * ctx.fs on the local disk with no fence: the authority every write carries is accepted and not enforced.
 * For compositions that confine nothing (the "minimal" patch) or confine elsewhere.
 */
export default class LocalFs extends DiskFs {
  static Config = FsIoConfig

  /** Where the change lands (through a link for writes, the link itself for remove and rename), unchecked. */
  protected override async admit(
    _kind: WriteKind,
    path: string,
    _authority: SandboxAuthority,
    reach: Reach,
  ): Promise<Admission> {
    return { target: reach === 'through' ? await resolveRealPath(path) : await resolveEntryPath(path) }
  }
}
