import type { Route, Usage } from '@dsh/llm'

/** Who named a session: the user (rename) or the auxiliary title request. A user's title always wins. */
export type TitleSource = 'user' | 'model'

declare module '@dsh/session' {
  interface SessionEventMap {
    /** A session's name. A `model` title never replaces a `user` one, whichever was logged last. */
    'session/title': { title: string; source: TitleSource }
    /** Hidden from default session lists (`archived: true`) or shown again. */
    'session/archived': { archived: boolean }
    /**
     * The title request about to be sent, logged before it is paid for so the request check at the
     * `llm/stream` boundary derives it: exactly this route, system prompt and one user text, no tools.
     */
    'title/request': { route: Route; system: string; prompt: string; maxOutputTokens: number }
    /** The title request ended: its usage (an auxiliary call, counted like any other) and the title or why none. */
    'title/response': { requestSeq: number; ok: boolean; usage: Usage; title?: string; reason?: string }
  }
}

const isString = (value: unknown): value is string => typeof value === 'string'
const isCount = (value: unknown) => Number.isInteger(value) && (value as number) >= 0

export function titleProblem(data: any): string | undefined {
  if (!isString(data?.title) || !data.title.trim()) return 'title must be a non-empty string'
  return data.source === 'user' || data.source === 'model' ? undefined : "source must be 'user' or 'model'"
}

export function archivedProblem(data: any): string | undefined {
  return typeof data?.archived === 'boolean' ? undefined : 'archived must be a boolean'
}

export function titleRequestProblem(data: any): string | undefined {
  if (!isString(data?.route?.provider) || !isString(data.route.model)) return 'route must name a provider and a model'
  if (!isString(data.system) || !isString(data.prompt)) return 'system and prompt must be strings'
  return isCount(data.maxOutputTokens) && data.maxOutputTokens > 0 ? undefined : 'maxOutputTokens must be a positive integer'
}

export function titleResponseProblem(data: any): string | undefined {
  if (!isCount(data?.requestSeq) || typeof data.ok !== 'boolean') return 'requestSeq must be a seq and ok a boolean'
  const usage = data.usage
  if (!usage || !['input', 'output', 'cacheRead', 'cacheWrite'].every((key) => isCount(usage[key]))) return 'usage must hold input, output, cacheRead and cacheWrite counts'
  if (data.title !== undefined && !isString(data.title)) return 'title must be a string'
  return data.reason === undefined || isString(data.reason) ? undefined : 'reason must be a string'
}

/**
 * The title a list shows, folded over a log in order: the last `user` title, else the last `model` one.
 * Shared by every reader of `session/title` so they agree.
 */
export function foldTitle(current: { title?: string; titleSource?: TitleSource }, data: { title: string; source: TitleSource }): { title?: string; titleSource?: TitleSource } {
  if (data.source === 'model' && current.titleSource === 'user') return current
  return { title: data.title, titleSource: data.source }
}
