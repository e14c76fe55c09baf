import { createHash } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { chmod, mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { linkOrCopyOnce, pathExists } from '@dsh/fs-disk'

const SHA = /^[0-9a-f]{64}$/

export const sha256Of = (data: Uint8Array) => createHash('sha256').update(data).digest('hex')

/**
 * Prior file contents by sha256 in one folder beside a session's log (like attachments): written once,
 * 0600, atomically; the same content is the same file, so a file checkpointed every turn costs one copy.
 */
export class BlobStore {
  constructor(readonly dir: string) {}

  async put(data: Uint8Array): Promise<string> {
    const sha256 = sha256Of(data)
    const path = join(this.dir, sha256)
    if (await pathExists(path)) return sha256
    await mkdir(this.dir, { recursive: true, mode: 0o700 })
    const temp = `${path}.${process.pid}.${Date.now()}.tmp`
    await writeFile(temp, data, { mode: 0o600 })
    await chmod(temp, 0o600)
    await rename(temp, path)
    return sha256
  }

  /** `put`, synchronously, for a walk that stores many small files (a folder snapshot's pool). */
  putSync(data: Uint8Array): string {
    const sha256 = sha256Of(data)
    const path = join(this.dir, sha256)
    if (existsSync(path)) return sha256
    mkdirSync(this.dir, { recursive: true, mode: 0o700 })
    const temp = `${path}.${process.pid}.${Date.now()}.tmp`
    writeFileSync(temp, data, { mode: 0o600 })
    chmodSync(temp, 0o600)
    renameSync(temp, path)
    return sha256
  }

  /** The bytes stored as `sha256`, checked to still hash to it; undefined when not stored. */
  async get(sha256: string): Promise<Buffer | undefined> {
    if (!SHA.test(sha256)) throw new Error(`"${sha256}" is not a sha256 hex digest`)
    let data: Buffer
    try {
      data = await readFile(join(this.dir, sha256))
    } catch {
      return undefined
    }
    if (sha256Of(data) !== sha256)
      throw new Error(`the checkpoint ${sha256} in ${this.dir} no longer holds the content it is named for`)
    return data
  }

  /**
   * `get`, synchronously, for a reader that must answer in the order of the log (ACP turns each event into
   * updates as it comes). Only for contents known to be small: the caller checks `bytes` first.
   */
  getSync(sha256: string): Buffer | undefined {
    if (!SHA.test(sha256)) throw new Error(`"${sha256}" is not a sha256 hex digest`)
    let data: Buffer
    try {
      data = readFileSync(join(this.dir, sha256))
    } catch {
      return undefined
    }
    if (sha256Of(data) !== sha256)
      throw new Error(`the checkpoint ${sha256} in ${this.dir} no longer holds the content it is named for`)
    return data
  }

  /** Gives this store one blob of another (a hard link, else a copy); true when it is there now. */
  async take(from: BlobStore, sha256: string): Promise<boolean> {
    if (!SHA.test(sha256)) throw new Error(`"${sha256}" is not a sha256 hex digest`)
    const target = join(this.dir, sha256)
    if (await pathExists(target)) return true
    await mkdir(this.dir, { recursive: true, mode: 0o700 })
    return linkOrCopyOnce(join(from.dir, sha256), target).then(
      () => true,
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return false
        throw error
      },
    )
  }

  /** Gives this store another's blobs (a fork keeps its parent's checkpoints): hard links, else copies. */
  async adopt(from: BlobStore): Promise<void> {
    let names: string[]
    try {
      names = await readdir(from.dir)
    } catch {
      return
    }
    for (const name of names.filter((entry) => SHA.test(entry))) {
      await mkdir(this.dir, { recursive: true, mode: 0o700 })
      const target = join(this.dir, name)
      // A blob the parent's store lost meanwhile (its session deleted) is not there to give.
      await linkOrCopyOnce(join(from.dir, name), target).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error
      })
    }
  }
}
