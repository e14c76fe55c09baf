import type CmdlineArgs from '@dsh/cmdline'
import { UsageError } from '@dsh/cmdline'
import { isLoopbackName } from './guard.ts'

export interface Listen {
  host: string
  port: number
  open: boolean
  /** Folders named with `--allow-root` (repeatable), besides the row's `allowRoots`. */
  allowRoots: string[]
}

/**
 * `--host`, `--port`, `--no-open` and `--allow-root <dir>` (repeatable) over the row's config. `--host` must be loopback or listed in
 * `trustedHosts`: the token is the only protection once the port is reachable from elsewhere, so exposing
 * it is a decision written in config, never a typo on the command line.
 */
export function readFlags(
  cmdline: CmdlineArgs,
  defaults: Omit<Listen, 'allowRoots'>,
  trustedHosts: readonly string[],
): Listen {
  const { values, positionals } = cmdline.parse({
    host: { type: 'string' },
    port: { type: 'string' },
    'no-open': { type: 'boolean' },
    'allow-root': { type: 'string', multiple: true },
  })
  if (positionals.length) throw new UsageError(`the web profile takes no arguments (got "${positionals.join(' ')}")`)
  const host = values.host ?? defaults.host
  if (!isLoopbackName(host) && !trustedHosts.some((trusted) => trusted.toLowerCase() === host.toLowerCase())) {
    throw new UsageError(
      `--host ${host}: the web host binds loopback only (127.0.0.1, ::1, localhost); to expose it, list the host in the webserver row's trustedHosts`,
    )
  }
  let port = defaults.port
  if (values.port !== undefined) {
    if (!/^\d{1,5}$/.test(values.port) || Number(values.port) > 65535)
      throw new UsageError(`--port ${values.port}: want a port number 0-65535 (0 picks a free port)`)
    port = Number(values.port)
  }
  return { host, port, open: defaults.open && !values['no-open'], allowRoots: values['allow-root'] ?? [] }
}
