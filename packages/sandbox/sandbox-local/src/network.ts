import { existsSync, statSync } from 'node:fs'
import { isAbsolute } from 'node:path'
import { fileURLToPath } from 'node:url'
import { SandboxError, type SandboxNetwork } from '@dsh/sandbox'
import { CLOSE_INHERITED } from './descriptors.ts'

/** Where the proxy's socket appears inside the sandbox (its private /tmp, so no host path is needed). */
export const INNER_PROXY_SOCKET = '/tmp/.dsh-network-proxy.sock'

/** The bridge scripts, beside `src` and `dist` alike: perl when the sandbox has it (fast to start), else node. */
export const BRIDGE_SCRIPTS = {
  perl: fileURLToPath(new URL('../bridge/bridge.pl', import.meta.url)),
  node: fileURLToPath(new URL('../bridge/bridge.mjs', import.meta.url)),
}

/** The variables npm, pip, git, curl and most HTTP clients read to find a proxy. */
export const PROXY_VARIABLES = [
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'http_proxy',
  'https_proxy',
  'ALL_PROXY',
  'all_proxy',
] as const
/** Removed so that no host exclusion sends a request around the proxy (it would fail in the namespace anyway). */
export const NO_PROXY_VARIABLES = ['NO_PROXY', 'no_proxy'] as const

/** The network asked for, checked: absent is `none`; a proxy socket must be an existing socket. */
export function checkedNetwork(network: SandboxNetwork | undefined): SandboxNetwork {
  if (!network) return { kind: 'none' }
  if (network.kind === 'none' || network.kind === 'host') return network
  if (network.kind !== 'proxy')
    throw new SandboxError(
      'SANDBOX_INVALID_AUTHORITY',
      `unknown network kind "${(network as { kind: unknown }).kind}" (known: none, proxy, host)`,
    )
  const { socket } = network
  if (typeof socket !== 'string' || !isAbsolute(socket) || !existsSync(socket) || !statSync(socket).isSocket()) {
    throw new SandboxError(
      'SANDBOX_INVALID_AUTHORITY',
      `network proxy socket "${socket}" is not an existing Unix socket`,
    )
  }
  return network
}

// The fallback launcher, when no perl was found: bash closes the descriptors the command would inherit, runs
// the node bridge, waits for its `ready` line (fail closed when it does not come), then becomes the command.
const LAUNCHER = [
  CLOSE_INHERITED,
  'node=$1 node_bridge=$2 socket=$3 port=$4; shift 4',
  'exec 3< <(exec "$node" "$node_bridge" "$socket" "$port" </dev/null 2>/dev/null)',
  'IFS= read -r ready <&3; exec 3<&-',
  'if [ "$ready" != ready ]; then echo "dsh: the network proxy bridge did not start inside the sandbox" >&2; exit 125; fi',
  'exec "$@"',
].join('\n')

export interface BridgeRuntimes {
  bash: string
  /** The perl found on the host's PATH (the sandbox sees the host's disk read-only); absent: bash and node. */
  perl?: string
  /** The fallback: the node running dsh. */
  node: string
}

/**
 * The argv (run inside the sandbox) that starts the bridge on `port` and then execs `argv`: with perl, one
 * process (`bridge/bridge.pl` closes inherited descriptors, listens, forks the bridge and becomes the
 * command), so no bash runs before the command's own; else a bash launcher and the node bridge.
 */
export function bridgedArgv(runtimes: BridgeRuntimes, port: number, argv: string[]): string[] {
  if (runtimes.perl) return [runtimes.perl, BRIDGE_SCRIPTS.perl, INNER_PROXY_SOCKET, String(port), '--', ...argv]
  return [
    runtimes.bash,
    '-c',
    LAUNCHER,
    'dsh-network-bridge',
    runtimes.node,
    BRIDGE_SCRIPTS.node,
    INNER_PROXY_SOCKET,
    String(port),
    ...argv,
  ]
}
