import { resolve } from 'node:path'
import { UsageError } from '@dsh/cmdline'
import type { Context } from '@dsh/cordis'
import { McpError, type Mcp } from '@dsh/mcp'
import type { McpAddInvocation } from './mcp-options.ts'
import type { McpRemoveInvocation, McpTestInvocation } from './options.ts'
import type { RunIO } from './run.ts'

function mcpOf(ctx: Context): Mcp {
  const mcp = ctx.get('mcp')
  if (!mcp) throw new Error('no mcp row is mounted in this profile, so there are no MCP servers')
  return mcp
}

/** A configuration mistake (bad entry, taken or unknown name, unreadable file) is the user's: exit 2. */
async function asUsage<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (error instanceof McpError && error.code === 'MCP_CONFIG_INVALID') throw new UsageError(error.message)
    throw error
  }
}

/** `dsh mcp add <name> …`: one server into $DSH_HOME/mcp.yaml, the file's comments and layout kept. */
export async function addMcpServer(ctx: Context, invocation: McpAddInvocation, io: RunIO): Promise<number> {
  const mcp = mcpOf(ctx)
  await asUsage(() => mcp.addUserServer(invocation.name, invocation.entry))
  io.stdout.write(
    `added MCP server "${invocation.name}" to ${mcp.userFile()} (dsh mcp test ${invocation.name} starts it once)\n`,
  )
  return 0
}

/** `dsh mcp remove <name>`: the server out of $DSH_HOME/mcp.yaml (a workspace's .mcp.json is the repository's). */
export async function removeMcpServer(ctx: Context, invocation: McpRemoveInvocation, io: RunIO): Promise<number> {
  const mcp = mcpOf(ctx)
  await asUsage(() => mcp.removeUserServer(invocation.name))
  io.stdout.write(`removed MCP server "${invocation.name}" from ${mcp.userFile()}\n`)
  return 0
}

/**
 * `dsh mcp test <name> [--cwd <dir>] [--json]`: starts the server as a session in that directory would (its
 * environment policy, sandbox and, for a workspace server, approval: nobody answers here, so an unapproved one
 * is refused), lists its tools and stops it, printing timings. The session it used stays as the record. Exit 0
 * when it started and listed, 1 when it did not, 2 for an unknown name or a bad file.
 */
export async function testMcpServer(ctx: Context, invocation: McpTestInvocation, io: RunIO): Promise<number> {
  const mcp = mcpOf(ctx)
  const cwd = resolve(ctx.app.cwd, invocation.cwd ?? '.')
  const agent = await ctx.agents.create({ cwd })
  try {
    const probe = await asUsage(() => mcp.probe(agent, invocation.name))
    if (invocation.json) io.stdout.write(JSON.stringify({ ...probe, sessionId: agent.session.id }) + '\n')
    else if (!probe.ok)
      io.stdout.write(
        `MCP server "${probe.server}" (${probe.origin}, ${probe.transport}): did not start after ${probe.startMs} ms: ${probe.message}\n`,
      )
    else {
      const lines = [
        `MCP server "${probe.server}" (${probe.origin}, ${probe.transport}): started in ${probe.startMs} ms, listed ${probe.tools.length} tool${probe.tools.length === 1 ? '' : 's'} in ${probe.listMs} ms, stopped in ${probe.stopMs} ms`,
        ...probe.tools.map(
          (tool) => `  ${tool.tool}${tool.description ? ` — ${tool.description.split('\n')[0]}` : ''}`,
        ),
      ]
      io.stdout.write(lines.join('\n') + '\n')
    }
    return probe.ok ? 0 : 1
  } finally {
    await agent.dispose()
  }
}
