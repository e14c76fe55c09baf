import { readFile } from 'node:fs/promises'
import { isAbsolute, join } from 'node:path'
import { parse } from 'yaml'
import { McpError, type McpServerConfig } from '@dsh/mcp'
import { mergeServers, parseServers } from './config.ts'

async function readIfPresent(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw new McpError('MCP_CONFIG_INVALID', `${file}: cannot be read: ${(error as Error).message}`)
  }
}

function parseText(text: string, file: string, json: boolean): unknown {
  try {
    return json ? JSON.parse(text) : parse(text)
  } catch (error) {
    throw new McpError('MCP_CONFIG_INVALID', `${file}: not valid ${json ? 'JSON' : 'YAML'}: ${(error as Error).message}`)
  }
}

/** The user's servers file: `userFile` under $DSH_HOME unless absolute. */
export const userFilePath = (home: string, userFile: string) => (isAbsolute(userFile) ? userFile : join(home, userFile))

/**
 * The configured servers of a workspace, merged in order: the user's `$DSH_HOME/mcp.yaml` (may set `trust`
 * and `sandbox`), then the workspace's `.mcp.json` read as Claude Code writes it (every server asks and is
 * confined; each needs approval before it starts). A bad file is an error naming it and the server.
 */
export async function readConfigured(home: string, cwd: string, files: { userFile: string; workspaceFile: string }): Promise<McpServerConfig[]> {
  const userFile = userFilePath(home, files.userFile)
  const workspaceFile = join(cwd, files.workspaceFile)
  const userText = await readIfPresent(userFile)
  const workspaceText = await readIfPresent(workspaceFile)
  const user = userText === undefined ? [] : parseServers(parseText(userText, userFile, false), { origin: 'user', source: userFile, userKeys: true })
  const workspace = workspaceText === undefined ? [] : parseServers(parseText(workspaceText, workspaceFile, true), { origin: 'workspace', source: workspaceFile, userKeys: false })
  return mergeServers(user, workspace)
}
