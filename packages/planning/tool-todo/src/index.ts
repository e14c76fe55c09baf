import type { Context } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import { checkShape } from '@dsh/session'
import { defineTool, ToolError, Type } from '@dsh/tools'
import { TODO_PRIORITIES, TODO_STATUSES, TodoItemData, TodoUpdatedData, type TodoItem } from './todo.ts'

export {
  currentTodos,
  TODO_PRIORITIES,
  TODO_STATUSES,
  TodoItemData,
  TodoUpdatedData,
  type TodoItem,
  type TodoUpdated,
} from './todo.ts'

export interface Config {
  maxItems: number
  maxContentChars: number
}

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  maxItems: Schema.natural().min(1).default(50).description('Entries one todo list may have.'),
  maxContentChars: Schema.natural().min(1).default(500).description('Characters one entry may have.'),
})

export const name = 'tool-todo'
export const inject = ['tools', 'sessions']

const MARK: Record<TodoItem['status'], string> = { pending: '[ ]', in_progress: '[~]', completed: '[x]' }

/** The list as the model reads it back. */
export function renderTodos(items: readonly TodoItem[]): string {
  if (!items.length) return 'The todo list is empty.'
  const counts = TODO_STATUSES.map(
    (status) => `${items.filter((item) => item.status === status).length} ${status.replace('_', ' ')}`,
  ).join(', ')
  return [
    `Todo list updated (${counts}):`,
    ...items.map((item) => `${MARK[item.status]} ${item.content} (${item.priority})`),
  ].join('\n')
}

/**
 * `todo_write` (docs/architecture.md, "Todo and plan mode"): the model replaces its whole task list; the list
 * is logged as `todo/updated`, so every surface shows it (session-view's `todos`) and a resumed session has it.
 */
export function apply(ctx: Context, config: Config) {
  // Ignorable: a composition without this row still opens the session (it just shows no list).
  ctx.sessions.defineKind(ctx, 'todo/updated', { ignorable: true, schema: TodoUpdatedData })
  const item = Type.Object(
    {
      content: Type.String({
        minLength: 1,
        maxLength: config.maxContentChars,
        description: 'What is to be done, in a few words.',
      }),
      status: Type.Union(
        TODO_STATUSES.map((status) => Type.Literal(status)),
        { description: 'pending, in_progress (the one you are on) or completed.' },
      ),
      priority: Type.Union(TODO_PRIORITIES.map((priority) => Type.Literal(priority))),
    },
    { additionalProperties: false },
  )
  ctx.tools.register(
    ctx,
    defineTool({
      name: 'todo_write',
      description:
        'Keep your task list for this session, shown to the user as you work: pass the whole list each time (it replaces the previous one). Use it for work of several steps; mark one entry in_progress while you work on it and completed as soon as it is done.',
      parameters: Type.Object(
        { todos: Type.Array(item, { maxItems: config.maxItems }) },
        { additionalProperties: false },
      ),
      summarize: (args) => `todo_write (${args.todos.length} entries)`,
      async execute(args, context) {
        const items = args.todos.map(({ content, status, priority }) => ({ content: content.trim(), status, priority }))
        const problem = checkShape(Type.Array(TodoItemData), items, 'todos') // what the log would refuse, named as the model wrote it
        if (problem) throw new ToolError('INVALID_ARGS', problem)
        context.session.append('todo/updated', { callId: context.callId, items })
        return renderTodos(items)
      },
    }),
  )
}
