import { statSync } from 'node:fs'

/**
 * A file's parsed content, loaded again only when the file changed (inode, size, mtime or ctime). Lets
 * credentials resolve per call, and `redact` run on every log line, without parsing the file each time.
 * A missing file reads as `empty`; a load that throws is retried on the next read.
 */
export class FileSnapshot<T> {
  private stamp: string | undefined
  private value: T

  constructor(
    readonly path: string,
    private readonly load: (path: string) => T,
    private readonly empty: T,
  ) {
    this.value = empty
  }

  read(): T {
    let stamp: string
    try {
      const stat = statSync(this.path, { bigint: true })
      stamp = `${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`
    } catch (error) {
      if (!(error instanceof Error && 'code' in error && error.code === 'ENOENT')) throw error
      this.stamp = undefined
      return (this.value = this.empty)
    }
    if (stamp !== this.stamp) {
      this.value = this.load(this.path)
      this.stamp = stamp
    }
    return this.value
  }
}
