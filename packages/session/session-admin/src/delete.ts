// Deleting a session with its subagent children (docs/architecture.md, "Finding sessions").
import { rm } from 'node:fs/promises'
import type { Context } from '@dsh/cordis'
import type {} from '@dsh/agent'
import { SessionError, type SessionEvent } from '@dsh/session'
import type {} from '@dsh/session-persistence'
import type {} from '@dsh/session-query'
import type {} from '@dsh/spill'
import { SessionAdminError } from './errors.ts'

/** A session id as the stores write it: letters, digits, `_` and `-` (never a path). */
export const SESSION_ID = /^[A-Za-z0-9_-]{1,128}$/

/** The sessions a log started as subagent children (`subagent/start`), in the order it started them. */
export function childIds(events: readonly SessionEvent[]): string[] {
  const ids = new Set<string>()
  for (const event of events) {
    if ((event.type as string) !== 'subagent/start') continue
    const child = (event.data as { childSessionId?: unknown }).childSessionId
    if (typeof child === 'string') ids.add(child)
  }
  return [...ids]
}

/** The children a stored log names; a damaged log (when `damagedAlone`) names none, so it can still be deleted. */
async function childrenOf(ctx: Context, id: string, damagedAlone: boolean): Promise<string[]> {
  try {
    return childIds((await ctx.sessions.read(id)).events)
  } catch (error) {
    if (
      damagedAlone &&
      error instanceof SessionError &&
      (error.code === 'SESSION_CORRUPT' || error.code === 'UNKNOWN_KIND')
    )
      return []
    throw error
  }
}

/** The parent a stored child's log names (`subagent/parent`); undefined for a damaged or parentless log. */
async function parentOf(ctx: Context, id: string): Promise<string | undefined> {
  try {
    const events = (await ctx.sessions.read(id)).events
    const link = events.findLast((event) => (event.type as string) === 'subagent/parent')
    return (link?.data as { parentSessionId?: string } | undefined)?.parentSessionId
  } catch {
    return undefined
  }
}

/**
 * The session and every stored descendant, parents first. A child that is not stored here (an ACP
 * subagent's own session lives in another agent) is not followed, nor one whose log does not name this
 * parent back: a log (an imported one, say) whose `subagent/start` names an unrelated session must not take
 * that session along in a delete or an export.
 */
export async function withDescendants(ctx: Context, id: string, damagedAlone = false): Promise<string[]> {
  const stored = new Set((await ctx.sessions.list()).map((summary) => summary.id))
  const order: string[] = []
  const queue = [id]
  while (queue.length) {
    const next = queue.shift()!
    if (order.includes(next)) continue
    order.push(next)
    for (const child of await childrenOf(ctx, next, damagedAlone))
      if (stored.has(child) && (await parentOf(ctx, child)) === next) queue.push(child)
  }
  return order
}

/**
 * Deletes a stored session, its subagent children, their spilled output and their search index entries.
 * Refused while any of them runs a turn in this process or is held by another process; an idle agent of
 * this process is let go first (its lease is this process's).
 */
export async function deleteSession(ctx: Context, id: string): Promise<string[]> {
  if (!SESSION_ID.test(id)) throw new SessionAdminError('INVALID_ID', `"${id}" is not a session id`)
  const ids = await withDescendants(ctx, id, true)
  const agents = ctx.get('agents')
  for (const each of ids) {
    if (agents?.bySession(each)?.running)
      throw new SessionAdminError('SESSION_RUNNING', `session ${each} is running a turn; stop it before deleting ${id}`)
  }
  for (const each of ids) {
    await agents?.bySession(each)?.dispose()
    await ctx.sessions.close(each)
  }
  await ctx.sessionPersistence.remove(ids)
  const spill = ctx.get('spillStore')
  const index = ctx.get('sessionQuery')
  for (const each of ids) {
    const spilled = spill?.readableDir(each)
    if (spilled) await rm(spilled, { recursive: true, force: true })
    await index?.forget(each)
  }
  return ids
}
