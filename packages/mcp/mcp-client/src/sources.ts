import { readdir, readFile } from 'node:fs/promises'
import { isAbsolute, join } from 'node:path'
import { parse } from 'yaml'
import { McpError, type McpServerConfig } from '@dsh/mcp'
import { mergeServers, parseServers } from './config.ts'
import { parseWorkspaceVariables } from './variables.ts'

async function readIfPresent(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return undefined
    // While a confined command runs, a missing protected file such as `.mcp.json` is an empty mount point
    // (docs/security.md, "missing protected names"): that is the file being absent, not a broken config.
    if (code === 'EISDIR' && (await readdir(file).catch(() => ['?'])).length === 0) return undefined
    throw new McpError('MCP_CONFIG_INVALID', `${file}: cannot be read: ${(error as Error).message}`)
  }
}

function parseText(text: string, file: string, json: boolean): unknown {
  try {
    return json ? JSON.parse(text) : parse(text)
  } catch (error) {
    throw new McpError(
      'MCP_CONFIG_INVALID',
      `${file}: not valid ${json ? 'JSON' : 'YAML'}: ${(error as Error).message}`,
    )
  }
}

/** The user's servers file: `userFile` under $DSH_HOME unless absolute. */
export const userFilePath = (home: string, userFile: string) => (isAbsolute(userFile) ? userFile : join(home, userFile))

/**
 * The configured servers of a workspace, merged in order: the user's `$DSH_HOME/mcp.yaml` (may set `trust`
 * and `sandbox`), then the workspace's `.mcp.json` read as Claude Code writes it (every server asks and is
 * confined; each needs approval before it starts, and its `${VAR}` come only from the user file's
 * `workspaceVariables` for its name). A bad file is an error naming it and the server.
 */
export async function readConfigured(
  home: string,
  cwd: string,
  files: { userFile: string; workspaceFile: string },
): Promise<McpServerConfig[]> {
  const userFile = userFilePath(home, files.userFile)
  const workspaceFile = join(cwd, files.workspaceFile)
  const userText = await readIfPresent(userFile)
  const workspaceText = await readIfPresent(workspaceFile)
  const userDocument = userText === undefined ? undefined : parseText(userText, userFile, false)
  const user = parseServers(userDocument, { origin: 'user', source: userFile, userKeys: true })
  const declared = parseWorkspaceVariables(userDocument, userFile)
  const workspace = (
    workspaceText === undefined
      ? []
      : parseServers(parseText(workspaceText, workspaceFile, true), {
          origin: 'workspace',
          source: workspaceFile,
          userKeys: false,
        })
  ).map((server) => ({
    ...server,
    userVariables: { source: userFile, values: declared[server.name] ?? {} },
  }))
  return mergeServers(user, workspace)
}
