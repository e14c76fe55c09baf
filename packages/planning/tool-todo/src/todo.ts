import type { SessionEvent } from '@dsh/session'

export const TODO_STATUSES = ['pending', 'in_progress', 'completed'] as const
export const TODO_PRIORITIES = ['high', 'medium', 'low'] as const

/** One entry of the agent's task list (the shape ACP's `plan` entries have too). */
export interface TodoItem {
  content: string
  status: (typeof TODO_STATUSES)[number]
  priority: (typeof TODO_PRIORITIES)[number]
}

/** The whole list as the model last wrote it, and the call that wrote it. */
export interface TodoUpdated {
  callId: string
  items: TodoItem[]
}

declare module '@dsh/session' {
  interface SessionEventMap {
    'todo/updated': TodoUpdated
  }
}

export function todoUpdatedProblem(data: any): string | undefined {
  if (typeof data?.callId !== 'string' || !Array.isArray(data.items)) return 'callId must be a string and items an array'
  const bad = data.items.findIndex(
    (item: any) =>
      typeof item?.content !== 'string' || !item.content.trim() || !(TODO_STATUSES as readonly unknown[]).includes(item.status) || !(TODO_PRIORITIES as readonly unknown[]).includes(item.priority),
  )
  return bad === -1 ? undefined : `items[${bad}] must have a non-empty content, a status (${TODO_STATUSES.join(', ')}) and a priority (${TODO_PRIORITIES.join(', ')})`
}

/** The list in force: the last `todo/updated` of the log (empty before any). */
export function currentTodos(events: readonly SessionEvent[]): TodoItem[] {
  for (let at = events.length - 1; at >= 0; at--) if (events[at]!.type === 'todo/updated') return (events[at] as SessionEvent<'todo/updated'>).data.items
  return []
}
