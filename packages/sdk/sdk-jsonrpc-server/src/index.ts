// The SDK surface (docs/architecture.md, "Surfaces"): the SDK protocol of @dsh/sdk-protocol on stdio.
import type { Context } from '@dsh/cordis'
import type {} from '@dsh/agent'
import type {} from '@dsh/app'
import type {} from '@dsh/approval'
import { UsageError } from '@dsh/cmdline'
import type {} from '@dsh/llm'
import type {} from '@dsh/session'
import { Config } from './config.ts'
import { SdkServer } from './server.ts'
import { defineClientToolsKind } from './client-tools.ts'
import { applyToolFilter } from './tool-filter.ts'

export { Config } from './config.ts'
export { SdkServer, type Stdio } from './server.ts'
export { LineSplitter, RpcPeer } from '@dsh/jsonrpc-lines'

export const name = 'sdk-jsonrpc-server'
export const inject = ['app', 'cmdlineArgs', 'agents', 'sessions', 'llm', 'approval', 'tools']

/** Serves the protocol on this process's stdin and stdout for as long as the row is mounted. */
export function apply(ctx: Context, config: Config) {
  // Everything is said over stdio: the profile takes no arguments, and a stray one (a typo in the program
  // that starts the runtime) is refused at boot (exit 2) rather than ignored.
  const { positionals } = ctx.cmdlineArgs.parse({})
  if (positionals.length)
    throw new UsageError(
      `the sdk profile takes no arguments; it speaks JSON-RPC on stdin and stdout (got "${positionals.join(' ')}")`,
    )
  defineClientToolsKind(ctx)
  applyToolFilter(ctx)
  // The launch's streams: the process's, or an in-process driver's (`ctx.app.stdio`).
  const server = new SdkServer(ctx, config, { input: ctx.app.stdio.stdin, output: ctx.app.stdio.stdout })
  ctx.effect(() => server.start(), 'sdk stdio server')
}
