import { expect, test } from 'vitest'
import type { SessionListItem } from '@dsh/web-protocol'
import { ancestorsOf, sessionTree, type SessionNode } from './session-tree.ts'

const row = (id: string, createdAt: number, parent?: string): SessionListItem => ({
  id,
  cwd: '/w',
  createdAt,
  updatedAt: createdAt,
  events: 1,
  turns: 1,
  status: 'idle',
  lockedElsewhere: false,
  agent: null,
  pendingApprovals: 0,
  ...(parent ? { subagentOf: { id: parent, description: `task of ${id}` } } : {}),
})
const shape = (nodes: SessionNode[]): unknown[] =>
  nodes.map((node) => (node.children.length ? [node.item.id, shape(node.children)] : node.item.id))

test("children are put under their parent's row in the order they started, grandchildren under them", () => {
  const all = [row('p', 1), row('c2', 5, 'p'), row('c1', 3, 'p'), row('g', 6, 'c1'), row('q', 2)]
  expect(shape(sessionTree(all, all))).toEqual([['p', [['c1', ['g']], 'c2']], 'q'])
  expect(ancestorsOf(sessionTree(all, all), 'g')).toEqual(['p', 'c1'])
  expect(ancestorsOf(sessionTree(all, all), 'q')).toEqual([])
})

test('a child of a hidden (archived) parent is hidden with it; one whose parent is not stored is a top-level row', () => {
  const all = [row('p', 1), row('c', 2, 'p'), row('lost', 3, 'gone')]
  expect(shape(sessionTree([all[1]!, all[2]!], all))).toEqual(['lost'])
})

test('rows whose parents lead round in a circle are still shown', () => {
  const all = [row('a', 1, 'b'), row('b', 2, 'a')]
  const roots = sessionTree(all, all)
  const ids = (nodes: SessionNode[]): string[] => nodes.flatMap((node) => [node.item.id, ...ids(node.children)])
  expect(ids(roots).sort()).toEqual(['a', 'b'])
})
