import { CheckCircle2, Circle, CircleDot, ListTodo } from 'lucide-react'
import type { TodoEntry } from '@dsh/session-view'

const ICONS = { pending: Circle, in_progress: CircleDot, completed: CheckCircle2 } as const
const WORDS = { pending: 'pending', in_progress: 'in progress', completed: 'done' } as const

/** The agent's task list (its last `todo_write`, folded by @dsh/session-view), above the composer. */
export function TodoPanel({ todos }: { todos: readonly TodoEntry[] | undefined }) {
  if (!todos?.length) return null
  const done = todos.filter((todo) => todo.status === 'completed').length
  return (
    <section className="todo-panel" data-testid="todo-panel" aria-label="Task list">
      <div className="todo-head">
        <ListTodo size={14} /> <strong>Tasks</strong>
        <span className="muted small">
          {done} of {todos.length} done
        </span>
      </div>
      <ul>
        {todos.map((todo, index) => {
          const Icon = ICONS[todo.status]
          return (
            <li key={index} className={`todo-${todo.status}`} data-status={todo.status} data-priority={todo.priority}>
              <Icon size={13} aria-label={WORDS[todo.status]} /> <span>{todo.content}</span>
              {todo.priority === 'high' && <span className="badge small">high</span>}
            </li>
          )
        })}
      </ul>
    </section>
  )
}
