import { expect, test } from 'vitest'
import { allPages } from './pages.ts'

test('every page is read in order until a page has no cursor', async () => {
  const pages: Record<string, { items: number[]; nextCursor?: string }> = {
    start: { items: [1, 2], nextCursor: 'b' },
    b: { items: [3], nextCursor: 'c' },
    c: { items: [4] },
  }
  expect(await allPages('s', 'tools', 10, async (cursor) => pages[cursor ?? 'start']!)).toEqual([1, 2, 3, 4])
})

test('a repeated cursor and a listing past maxPages are errors naming the server, not loops', async () => {
  await expect(allPages('s', 'prompts', 10, async () => ({ items: [0], nextCursor: 'same' }))).rejects.toMatchObject({
    code: 'MCP_SERVER_FAILED',
    message: 'MCP server "s" repeated the cursor "same" while listing its prompts',
  })
  let n = 0
  await expect(
    allPages('s', 'resources', 5, async () => ({ items: [n], nextCursor: String(++n) })),
  ).rejects.toMatchObject({
    message: 'MCP server "s" listed more than 5 pages of resources (mcp-client maxListPages)',
  })
  expect(n).toBe(5)
})
