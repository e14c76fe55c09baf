import { oneOf, RouteSchema, Type, UsageSchema, type Static } from '@dsh/session'

/** Who named a session: the user (rename) or the auxiliary title request. A user's title always wins. */
export const TITLE_SOURCES = ['user', 'model'] as const
export type TitleSource = (typeof TITLE_SOURCES)[number]

// Each session-admin kind's type and its check are one TypeBox schema (issue #28.6).

/** A session's name. A `model` title never replaces a `user` one, whichever was logged last. */
export const SessionTitleData = Type.Object({
  title: Type.String({ pattern: '\\S', is: 'a title that is not blank' }),
  source: oneOf(TITLE_SOURCES),
})
/** Hidden from default session lists (`archived: true`) or shown again. */
export const SessionArchivedData = Type.Object({ archived: Type.Boolean() })
/**
 * The title request about to be sent, logged before it is paid for so the request check at the
 * `llm/stream` boundary derives it: exactly this route, system prompt and one user text, no tools.
 */
export const TitleRequestData = Type.Object({
  route: RouteSchema,
  system: Type.String(),
  prompt: Type.String(),
  maxOutputTokens: Type.Integer({ minimum: 1 }),
})
/** The title request ended: its usage (an auxiliary call, counted like any other) and the title or why none. */
export const TitleResponseData = Type.Object({
  requestSeq: Type.Integer({ minimum: 0 }),
  ok: Type.Boolean(),
  usage: UsageSchema,
  title: Type.Optional(Type.String()),
  reason: Type.Optional(Type.String()),
})

declare module '@dsh/session' {
  interface SessionEventMap {
    'session/title': Static<typeof SessionTitleData>
    'session/archived': Static<typeof SessionArchivedData>
    'title/request': Static<typeof TitleRequestData>
    'title/response': Static<typeof TitleResponseData>
  }
}

/**
 * The title a list shows, folded over a log in order: the last `user` title, else the last `model` one.
 * Shared by every reader of `session/title` so they agree.
 */
export function foldTitle(
  current: { title?: string; titleSource?: TitleSource },
  data: { title: string; source: TitleSource },
): { title?: string; titleSource?: TitleSource } {
  if (data.source === 'model' && current.titleSource === 'user') return current
  return { title: data.title, titleSource: data.source }
}
