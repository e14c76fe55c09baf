import { randomUUID } from 'node:crypto'
import { readFile, rename, writeFile, mkdir } from 'node:fs/promises'
import { dirname } from 'node:path'
import { Document, isMap, parseDocument } from 'yaml'
import { McpError } from '@dsh/mcp'
import { parseServer } from './config.ts'

async function readDocument(file: string): Promise<Document> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Document({ mcpServers: {} })
    throw new McpError('MCP_CONFIG_INVALID', `${file}: cannot be read: ${(error as Error).message}`)
  }
  const document = parseDocument(text)
  if (document.errors.length)
    throw new McpError('MCP_CONFIG_INVALID', `${file}: not valid YAML: ${document.errors[0]!.message}`)
  if (document.contents === null) return new Document({ mcpServers: {} })
  if (!isMap(document.contents))
    throw new McpError('MCP_CONFIG_INVALID', `${file}: expected a mapping with "mcpServers"`)
  return document
}

/** The key holding the servers: `mcpServers`, or dsh's older `servers` where only that one is written. */
const serversKey = (document: Document) =>
  !document.has('mcpServers') && document.has('servers') ? 'servers' : 'mcpServers'

/** Written next to the file and renamed over it: a reader never sees half a file. */
async function writeAtomically(file: string, text: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true })
  const temporary = `${file}.${randomUUID()}.tmp`
  await writeFile(temporary, text, { mode: 0o600 })
  await rename(temporary, file)
}

const namesIn = (document: Document, key: string): string[] => {
  const servers = document.get(key)
  return isMap(servers) ? servers.items.map((pair) => String((pair.key as { value?: unknown })?.value ?? pair.key)) : []
}

/**
 * Adds one server to the user's file, keeping its comments and layout (the yaml Document API): the entry is
 * validated as the file will be read (naming the file, the server and the key) and a taken name is refused.
 */
export async function addUserServer(file: string, name: string, entry: Record<string, unknown>): Promise<void> {
  parseServer(name, entry, { origin: 'user', source: file, userKeys: true })
  const document = await readDocument(file)
  const key = serversKey(document)
  if (document.hasIn([key, name]))
    throw new McpError(
      'MCP_CONFIG_INVALID',
      `${file}: an MCP server named "${name}" is already configured (dsh mcp remove ${name} first)`,
    )
  if (!isMap(document.get(key))) document.set(key, document.createNode({}))
  document.setIn([key, name], document.createNode(entry))
  await writeAtomically(file, document.toString())
}

/** Removes one server from the user's file, keeping the rest as written; an unknown name is an error listing the known ones. */
export async function removeUserServer(file: string, name: string): Promise<void> {
  const document = await readDocument(file)
  const key = serversKey(document)
  if (!document.hasIn([key, name])) {
    const known = namesIn(document, key)
    throw new McpError(
      'MCP_CONFIG_INVALID',
      `${file}: no MCP server named "${name}" (configured: ${known.join(', ') || 'none'})`,
    )
  }
  document.deleteIn([key, name])
  await writeAtomically(file, document.toString())
}
