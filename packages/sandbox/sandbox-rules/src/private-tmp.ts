import { existsSync, realpathSync } from 'node:fs'
import { isAbsolute, sep } from 'node:path'

/**
 * The sandbox gives a confined command a private /tmp, which would hide a program the user's configuration
 * runs from there (a command or a script path under /tmp, and the packages beside it: an MCP server, a language
 * server of a checkout under /tmp). Each such word's top-level /tmp folder, to be made read-only visible to that
 * program (`SandboxAuthority.readableRoots`); the path rules still hide secrets in it.
 */
export function hiddenByPrivateTmp(argv: readonly string[]): string[] {
  const roots = new Set<string>()
  for (const word of argv) {
    if (!isAbsolute(word) || !existsSync(word)) continue
    const parts = realpathSync(word).split(sep)
    if (parts[1] === 'tmp' && parts.length > 3) roots.add(parts.slice(0, 3).join(sep))
  }
  return [...roots]
}
