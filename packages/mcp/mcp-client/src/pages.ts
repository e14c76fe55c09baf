import { ToolError } from '@dsh/tools'

/** One page of an MCP listing (`tools/list`, `resources/list`, `prompts/list`). */
export interface Page<T> {
  items: T[]
  nextCursor?: string
}

/**
 * Every page of a listing, in order. A server that hands back a cursor it already gave, or pages past
 * `maxPages`, is an error naming it — a hostile or broken server must not hold a turn in an endless loop
 * or grow the catalog without bound.
 */
export async function allPages<T>(
  server: string,
  what: string,
  maxPages: number,
  fetch: (cursor: string | undefined) => Promise<Page<T>>,
): Promise<T[]> {
  const items: T[] = []
  const seen = new Set<string>()
  let cursor: string | undefined
  for (let pages = 0; ;) {
    const page = await fetch(cursor)
    items.push(...page.items)
    cursor = page.nextCursor
    if (cursor === undefined) return items
    if (seen.has(cursor))
      throw new ToolError(
        'MCP_SERVER_FAILED',
        `MCP server "${server}" repeated the cursor ${JSON.stringify(cursor.slice(0, 80))} while listing its ${what}`,
      )
    seen.add(cursor)
    if (++pages >= maxPages)
      throw new ToolError(
        'MCP_SERVER_FAILED',
        `MCP server "${server}" listed more than ${maxPages} pages of ${what} (mcp-client maxListPages)`,
      )
  }
}
