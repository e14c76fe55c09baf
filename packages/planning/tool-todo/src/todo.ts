import { oneOf, Type, type SessionEvent, type Static } from '@dsh/session'

export const TODO_STATUSES = ['pending', 'in_progress', 'completed'] as const
export const TODO_PRIORITIES = ['high', 'medium', 'low'] as const

/** One entry of the agent's task list (the shape ACP's `plan` entries have too). */
export const TodoItemData = Type.Object({
  content: Type.String({ pattern: '\\S', is: 'text that is not blank' }),
  status: oneOf(TODO_STATUSES),
  priority: oneOf(TODO_PRIORITIES),
})
export type TodoItem = Static<typeof TodoItemData>

/** The whole list as the model last wrote it, and the call that wrote it. Its type and its check (issue #28.6). */
export const TodoUpdatedData = Type.Object({ callId: Type.String(), items: Type.Array(TodoItemData) })
export type TodoUpdated = Static<typeof TodoUpdatedData>

declare module '@dsh/session' {
  interface SessionEventMap {
    'todo/updated': TodoUpdated
  }
}

/** The list in force: the last `todo/updated` of the log (empty before any). */
export function currentTodos(events: readonly SessionEvent[]): TodoItem[] {
  for (let at = events.length - 1; at >= 0; at--)
    if (events[at]!.type === 'todo/updated') return (events[at] as SessionEvent<'todo/updated'>).data.items
  return []
}
