import { oneOf, Type, type Static } from '@dsh/session'

export const WEB_FETCH_OUTCOMES = ['fetched', 'cached', 'refused', 'failed'] as const

/**
 * One `web_fetch` (`web/fetched`): the URL asked, how it ended, and for a fetch the final status and the
 * bytes read. Ignorable: the tool result is what the model reads; this is the audit line.
 */
export const WebFetchedData = Type.Object({
  url: Type.String(),
  outcome: oneOf(WEB_FETCH_OUTCOMES),
  status: Type.Optional(Type.Integer()),
  bytes: Type.Optional(Type.Integer({ minimum: 0 })),
  /** Where the redirects ended, when there were any. */
  finalUrl: Type.Optional(Type.String()),
  contentType: Type.Optional(Type.String()),
  /** Why the body was cut short: the size cap or the deadline. */
  cut: Type.Optional(oneOf(['size', 'time'] as const)),
  /** Why it was refused or failed, as the model read it. */
  error: Type.Optional(Type.String()),
})
export type WebFetched = Static<typeof WebFetchedData>
