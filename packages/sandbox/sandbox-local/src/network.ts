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
export const PROXY_VARIABLES = ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy', 'ALL_PROXY', 'all_proxy'] as const
/** Removed so that no host exclusion sends a request around the proxy (it would fail in the namespace anyway). */
export const NO_PROXY_VARIABLES = ['NO_PROXY', 'no_proxy'] as const

/** The network asked for, checked: absent is `none`; a proxy socket must be an existing socket. */
export function checkedNetwork(network: SandboxNetwork | undefined): SandboxNetwork {
  if (!network) return { kind: 'none' }
  if (network.kind === 'none' || network.kind === 'host') return network
  if (network.kind !== 'proxy') throw new SandboxError('SANDBOX_INVALID_AUTHORITY', `unknown network kind "${(network as { kind: unknown }).kind}" (known: none, proxy, host)`)
  const { socket } = network
  if (typeof socket !== 'string' || !isAbsolute(socket) || !existsSync(socket) || !statSync(socket).isSocket()) {
    throw new SandboxError('SANDBOX_INVALID_AUTHORITY', `network proxy socket "${socket}" is not an existing Unix socket`)
  }
  return network
}

// Closes the descriptors the command would inherit, runs the bridge (perl if found, else node), waits for its `ready` line (fail closed when it does not
// come), then becomes the command.
const LAUNCHER = [
  CLOSE_INHERITED,
  'perl=$1 perl_bridge=$2 node=$3 node_bridge=$4 socket=$5 port=$6; shift 6',
  'if command -v "$perl" >/dev/null 2>&1; then set -- "$perl" "$perl_bridge" "$socket" "$port" -- "$@"; else set -- "$node" "$node_bridge" "$socket" "$port" -- "$@"; fi',
  'exec 3< <(exec "$1" "$2" "$3" "$4" </dev/null 2>/dev/null); shift 5',
  'IFS= read -r ready <&3; exec 3<&-',
  'if [ "$ready" != ready ]; then echo "dsh: the network proxy bridge did not start inside the sandbox" >&2; exit 125; fi',
  'exec "$@"',
].join('\n')

export interface BridgeRuntimes {
  bash: string
  /** Preferred when it is on the sandbox's PATH (or an absolute path that exists). */
  perl: string
  /** The fallback: the node running dsh. */
  node: string
}

/** The argv (run inside the sandbox) that starts the bridge on `port` and then execs `argv`. */
export function bridgedArgv(runtimes: BridgeRuntimes, port: number, argv: string[]): string[] {
  return [runtimes.bash, '-c', LAUNCHER, 'dsh-network-bridge', runtimes.perl, BRIDGE_SCRIPTS.perl, runtimes.node, BRIDGE_SCRIPTS.node, INNER_PROXY_SOCKET, String(port), ...argv]
}
