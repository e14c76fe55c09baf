import type { Context } from '@dsh/cordis'
import type {} from '@dsh/approval'
import { entryBytes, MEMORY_SCOPES, MemoryError, sanitizeEntry, type MemoryScope } from '@dsh/memory'
import { defineTool, ToolError, Type, type ToolContext, type ToolDefinition } from '@dsh/tools'
import { memoryLimits } from './settings.ts'

interface Proposal {
  scope: MemoryScope
  text: string
}

/**
 * `memory`: the model proposes one entry; a person accepts it through the approval service (or the `auto`
 * setting does), and only then is it appended to the file of its scope. No path, no other file: the provider
 * decides where a scope lives. Every proposal and its outcome is logged (`memory/proposed`, `memory/decided`).
 */
export function memoryTool(ctx: Context): ToolDefinition<Proposal> {
  return defineTool({
    name: 'memory',
    description:
      "Propose one short entry for the user's memory, read at the start of every new session: scope `user` (the user's, for every workspace) or `workspace` (this workspace only). A person accepts or declines it; nothing is saved otherwise. One line of plain text, a lasting preference or fact the user stated (e.g. `Prefers pnpm over npm in this repo`), never task progress or text from files or tool output.",
    parameters: Type.Object(
      {
        scope: Type.Union(
          MEMORY_SCOPES.map((scope) => Type.Literal(scope)),
          { description: 'user (every workspace) or workspace (this one).' },
        ),
        text: Type.String({ minLength: 1, description: 'The entry, one line.' }),
      },
      { additionalProperties: false },
    ),
    summarize: (args) => `memory (${args.scope}): ${sanitizeEntry(String(args.text ?? ''))}`,
    async execute(args, context) {
      const limits = memoryLimits(ctx)
      const text = sanitizeEntry(args.text)
      if (!text) throw new ToolError('INVALID_ARGS', 'text must hold some words once control characters are removed')
      if (text.length > limits.maxEntryChars)
        throw new ToolError(
          'INVALID_ARGS',
          `text has ${text.length} characters; a memory entry may have ${limits.maxEntryChars} (memory.maxEntryChars): say it shorter`,
        )
      const file = await ctx.memory.read(args.scope, context.cwd)
      const session = context.session
      session.append('memory/proposed', { callId: context.callId, scope: args.scope, text, path: file.path })
      if (file.bytes + entryBytes(text) > limits.maxBytes) {
        // Refused before anyone is asked: a person should not accept what cannot be stored.
        const reason = `the ${args.scope} memory (${file.path}) is full: ${file.bytes} of ${limits.maxBytes} bytes used, the entry needs ${entryBytes(text)}. The user can delete entries with /memory delete ${args.scope} <n> or raise memory.maxBytes.`
        session.append('memory/decided', { callId: context.callId, outcome: 'refused', by: 'limits', reason })
        await session.flush()
        throw new ToolError('MEMORY_FULL', reason)
      }
      const decided = await decide(ctx, { scope: args.scope, text }, context)
      if (!decided.text) {
        session.append('memory/decided', { callId: context.callId, outcome: 'declined', by: decided.by })
        await session.flush()
        throw new ToolError(
          'APPROVAL_REJECTED',
          `The memory entry was declined (${decided.by}); nothing was saved. Do not propose it again unless the user asks.${decided.message ? ` The user said: ${decided.message}` : ''}`,
        )
      }
      try {
        const saved = await ctx.memory.append(args.scope, context.cwd, decided.text, limits)
        session.append('memory/decided', {
          callId: context.callId,
          outcome: 'accepted',
          by: decided.by,
          text: saved.entries.at(-1)!,
          entry: saved.entries.length,
        })
        await session.flush()
        return `Saved to the ${args.scope} memory as entry ${saved.entries.length}: ${saved.entries.at(-1)}\nNew sessions will read it; this session already has it in the history.`
      } catch (error) {
        if (!(error instanceof MemoryError)) throw error
        session.append('memory/decided', {
          callId: context.callId,
          outcome: 'refused',
          by: 'limits',
          reason: error.message,
        })
        await session.flush()
        throw new ToolError(error.code === 'MEMORY_FULL' ? 'MEMORY_FULL' : 'INVALID_ARGS', error.message)
      }
    },
  })
}

/**
 * The `auto` setting accepts; otherwise a person is asked through ctx.approval (no approval row, no answerer,
 * a timeout or a cancelled turn is a decline). An answerer that edited the arguments stores its text.
 */
async function decide(
  ctx: Context,
  proposal: Proposal,
  context: ToolContext,
): Promise<{ text?: string; by: string; message?: string }> {
  if (ctx.settings.get('memory.accept') === 'auto') return { text: proposal.text, by: 'setting' }
  const approval = ctx.get('approval')
  if (!approval) return { by: 'no-approval-row' }
  const decision = await approval.request(
    context.session,
    {
      agentId: context.agentId,
      callId: context.callId,
      tool: 'memory',
      summary: `remember (${proposal.scope}): ${proposal.text}`,
      reason: `Every new ${proposal.scope === 'user' ? 'session of yours' : 'session in this workspace'} will read this entry. Accept only what you want the model to keep.`,
      arguments: { ...proposal },
    },
    context.signal,
  )
  if (decision.answer === 'reject')
    return { by: decision.by, ...(decision.message ? { message: decision.message } : {}) }
  const edited = decision.arguments?.text
  const text = typeof edited === 'string' ? sanitizeEntry(edited) : proposal.text
  return text ? { text, by: decision.by } : { by: 'empty-edit' }
}
