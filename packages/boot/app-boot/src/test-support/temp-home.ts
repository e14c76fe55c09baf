import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'

/** A throwaway DSH_HOME with helpers to write patch files and plugin modules into it. */
export function tempHome() {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-home-'))
  return {
    dir,
    write(relative: string, text: string): string {
      const file = join(dir, relative)
      mkdirSync(dirname(file), { recursive: true })
      writeFileSync(file, text)
      return file
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  }
}
