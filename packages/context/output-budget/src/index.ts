// The output budget of a request (issue #18 part 6; docs/architecture.md, "Context").
import type { Context } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type { RequestDraft } from '@dsh/agent'
import type {} from '@dsh/llm'
import { estimateHeader, estimateMessage, type EstimateOptions } from '@dsh/token-meter'

export interface Config extends EstimateOptions {
  marginTokens: number
  minOutputTokens: number
}

export const name = 'output-budget'
export const inject = ['llm']

export const Config: Schema<Config> = Schema.object({
  marginTokens: Schema.natural()
    .default(256)
    .description("Tokens kept free of the window besides the request and its answer (the estimate's error)."),
  minOutputTokens: Schema.natural()
    .min(1)
    .default(1024)
    .description(
      'A request that leaves less than this for the answer is not sent: the turn ends saying the window is full.',
    ),
  charsPerToken: Schema.number()
    .min(1)
    .default(4)
    .description('Characters per token of the estimate (used when no token meter is mounted).'),
  imageTokens: Schema.natural().default(1600).description('Estimated tokens of one image (without a token meter).'),
  messageOverheadTokens: Schema.natural()
    .default(4)
    .description('Estimated tokens each message adds beyond its content (without a token meter).'),
})

/** A turn whose next request would leave no room for an answer in the model's window. */
export class ContextWindowFullError extends Error {
  override name = 'ContextWindowFullError'
  readonly code = 'CONTEXT_WINDOW_FULL'
}

/** Estimated input tokens of the request the loop is about to send: header plus the history the log derives. */
function inputTokens(ctx: Context, draft: RequestDraft, config: Config): number {
  const messages = draft.agent.session.messages()
  const meter = ctx.get('tokenMeter')
  if (meter) return meter.estimateRequest({ ...draft.request, messages })
  let total = estimateHeader(draft.request, config)
  for (const message of messages) total += estimateMessage(message, config)
  return total
}

/**
 * On `agent/request`, after every other listener (compaction may have shrunk the history): the request's
 * `maxOutputTokens` becomes the smaller of the route's output limit and what the window has left after the
 * request, so a small window is never asked for the catalog's whole output limit (the provider would refuse
 * it). When less than `minOutputTokens` is left the request is not sent: the turn ends with
 * `CONTEXT_WINDOW_FULL`, naming the sizes. The value is set before the loop logs the request header, so
 * the request is still what the log derives.
 */
export function apply(ctx: Context, config: Config) {
  ctx.on('agent/request', async (draft, next) => {
    await next()
    const request = draft.request
    const info = ctx.llm.describe(request.route)
    if (!info.contextWindow) return
    const input = inputTokens(ctx, draft, config)
    const left = info.contextWindow - input - config.marginTokens
    if (left < config.minOutputTokens) {
      throw new ContextWindowFullError(
        `the conversation fills the model's context window: about ${input} of ${info.contextWindow} tokens are taken, leaving ${Math.max(0, left)} for an answer (at least ${config.minOutputTokens} are needed). Start a new session, or use a composition with compaction.`,
      )
    }
    const limit = request.maxOutputTokens ?? info.maxOutputTokens ?? left
    request.maxOutputTokens = Math.min(limit, left)
  })
}
