import type { Readable } from 'node:stream'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { McpStdioServer } from '@dsh/mcp'
import type { SandboxAuthority } from '@dsh/sandbox'
import { hiddenByPrivateTmp } from '@dsh/sandbox-rules'
import { serverEnvironment } from './variables.ts'

export interface StdioPlan {
  server: McpStdioServer
  cwd: string
  /** The scrubbed environment of ctx.subprocess (the seam's policy), before the server's own variables. */
  baseEnvironment: Record<string, string>
  /** dsh's own environment, read only for the `${VAR}` the server's configuration names (a workspace server: only through the user's declared values). */
  processEnvironment: Readonly<Record<string, string | undefined>>
  /** The session's authority, or undefined to run unconfined (`sandbox: false`, danger-full-access). */
  authority?: SandboxAuthority
  confine?(argv: string[], options: { cwd: string; authority: SandboxAuthority }): Promise<{ argv: string[] }>
  stderrTailBytes: number
}

/**
 * A stdio server's child: the scrubbed environment plus exactly the variables its configuration names
 * (the one way a secret reaches it), confined by ctx.sandbox unless the plan has no authority. stderr is
 * kept (its tail) for the message of a failed start or an exit, never passed to dsh's own stderr.
 */
export async function openStdio(plan: StdioPlan): Promise<{ transport: Transport; diagnostics: () => string }> {
  const { server } = plan
  // An editor passes values as the user typed them there; the user's files and programs may refer to dsh's
  // variables; a workspace's file only to what the user declared for it (variables.ts).
  const env = { ...plan.baseEnvironment, ...serverEnvironment(server, plan.processEnvironment) }
  let argv = [server.command, ...server.args]
  if (plan.authority) {
    if (!plan.confine)
      throw new Error(
        'a confined mode is in force and no sandbox row is mounted (set sandbox: false in the server configuration to run it unconfined)',
      )
    const readableRoots = hiddenByPrivateTmp(argv)
    const authority = readableRoots.length
      ? { ...plan.authority, readableRoots: [...(plan.authority.readableRoots ?? []), ...readableRoots] }
      : plan.authority
    argv = (await plan.confine(argv, { cwd: plan.cwd, authority })).argv
  }
  const transport = new StdioClientTransport({
    command: argv[0]!,
    args: argv.slice(1),
    env,
    cwd: plan.cwd,
    stderr: 'pipe',
  })
  let tail = ''
  ;(transport.stderr as Readable | null)?.on('data', (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-plan.stderrTailBytes)
  })
  return { transport, diagnostics: () => tail.trim().split('\n').slice(-3).join(' | ') }
}
