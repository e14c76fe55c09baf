import type { SessionListItem } from '@dsh/web-protocol'

/** A sidebar row: a session and the subagent sessions it started (theirs nested under them), oldest first. */
export interface SessionNode {
  item: SessionListItem
  children: SessionNode[]
}

/**
 * The listed sessions as a forest: a subagent's child (`subagentOf`) is put under its parent's row, never
 * among the top-level rows. `shown` is what the sidebar shows now (archived ones may be left out); `all` is
 * every listed session, so a child of a hidden parent is hidden with it, while one whose parent is not
 * stored at all (removed by hand, another home) stays reachable as a top-level row.
 */
export function sessionTree(shown: readonly SessionListItem[], all: readonly SessionListItem[]): SessionNode[] {
  const nodes = new Map(shown.map((item) => [item.id, { item, children: [] as SessionNode[] }]))
  const stored = new Set(all.map((item) => item.id))
  const roots: SessionNode[] = []
  for (const node of nodes.values()) {
    const parentId = node.item.subagentOf?.id
    const parent = parentId !== undefined && parentId !== node.item.id ? nodes.get(parentId) : undefined
    if (parent) parent.children.push(node)
    else if (parentId === undefined || !stored.has(parentId)) roots.push(node)
  }
  const reached = new Set<string>()
  const walk = (node: SessionNode) => {
    reached.add(node.item.id)
    node.children.sort((a, b) => a.item.createdAt - b.item.createdAt)
    node.children.forEach(walk)
  }
  roots.forEach(walk)
  // Rows whose parents lead round in a circle (a crafted import naming its own descendant) no root reaches:
  // each such circle is cut at one row, shown at the top, rather than lost.
  for (const node of nodes.values()) {
    if (reached.has(node.item.id) || !nodes.has(node.item.subagentOf?.id ?? '')) continue
    const parent = nodes.get(node.item.subagentOf!.id)!
    parent.children = parent.children.filter((child) => child !== node)
    roots.push(node)
    walk(node)
  }
  return roots
}

/** Whether a row or any row under it satisfies `test`. */
export function anyIn(node: SessionNode, test: (item: SessionListItem) => boolean): boolean {
  return test(node.item) || node.children.some((child) => anyIn(child, test))
}

/** The ids of the sessions above `id` in the forest, the top-level one first (empty for a top-level row or an unknown id). */
export function ancestorsOf(roots: readonly SessionNode[], id: string): string[] {
  const path: string[] = []
  const find = (node: SessionNode): boolean => {
    if (node.item.id === id) return true
    path.push(node.item.id)
    if (node.children.some(find)) return true
    path.pop()
    return false
  }
  roots.some(find)
  return path
}
