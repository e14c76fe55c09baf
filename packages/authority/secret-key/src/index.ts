import { randomBytes } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'

// A secret key dsh keeps under $DSH_HOME (the grants' integrity key, the web sign-in key): 32 random bytes as
// hex in a 0600 file, made on first use. Each such file is also a secret path of sandbox-policy, so nothing
// confined can read it (docs/security.md).

const KEY_BYTES = 32

/** The key in `file`, or undefined when none was made yet. A file of the wrong shape is an error naming it and `what` deleting it costs. */
export async function readSecretKey(file: string, consequence: string): Promise<Buffer | undefined> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  const hex = text.trim()
  if (!new RegExp(`^[0-9a-f]{${KEY_BYTES * 2}}$`).test(hex))
    throw new Error(
      `${file}: not a dsh key (${KEY_BYTES * 2} hex digits); delete it to make a new one (${consequence})`,
    )
  return Buffer.from(hex, 'hex')
}

/** The key in `file`, made on first use: random, written 0600 with O_EXCL so two processes starting at once agree on one. */
export async function ensureSecretKey(file: string, consequence: string): Promise<Buffer> {
  const known = await readSecretKey(file, consequence)
  if (known) return known
  await mkdir(dirname(file), { recursive: true })
  try {
    await writeFile(file, randomBytes(KEY_BYTES).toString('hex') + '\n', { mode: 0o600, flag: 'wx' })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
  return (await readSecretKey(file, consequence))!
}
