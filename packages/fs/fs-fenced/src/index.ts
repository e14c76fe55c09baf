import { FsIoConfig } from '@dsh/fs'
import { DiskFs } from '@dsh/fs-disk'

export type Config = FsIoConfig
export { admit, type Admission, type Reach, type WriteKind } from '@dsh/fs-disk'

/**
 * ctx.fs on the local disk with every write fenced by the authority it carries (docs/security.md): read-only
 * refuses, workspace-write admits only real paths inside the writable roots, danger-full-access admits all.
 * The refusal comes before any effect; reads are not fenced. The fence is `DiskFs`'s own (`admit` in @dsh/fs).
 */
export default class FencedFs extends DiskFs {
  static Config = FsIoConfig
}
