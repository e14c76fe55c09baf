import type { Llm, Route } from '@dsh/llm'
import type { Session } from '@dsh/session'
import type {} from '@dsh/compaction'

// The window a provider states in its "too long" refusal (issue #18: dsh kept assuming 1,000,000 tokens
// although the provider said 131,072). The wordings are the providers' own.
const STATED_WINDOW = [
  /maximum context length is ([\d,]+) tokens/i, // OpenAI, DeepSeek, vLLM and other chat-completions servers
  /prompt is too long: [\d,]+ tokens > ([\d,]+) maximum/i, // Anthropic
  /exceed context limit: [\d,]+ \+ [\d,]+ > ([\d,]+)/i, // Anthropic, when max_tokens is what overflows
  /context (?:window|length|limit) (?:is|of) ([\d,]+) tokens/i,
]

/** The context window a refusal's text names, or undefined when it names none. */
export function statedWindow(text: string): number | undefined {
  for (const pattern of STATED_WINDOW) {
    const match = pattern.exec(text)
    const tokens = match ? Number(match[1]!.replace(/,/g, '')) : NaN
    if (Number.isInteger(tokens) && tokens > 0) return tokens
  }
  return undefined
}

/** The smallest window the session's log learned for `route` (`context/window`), if any. */
export function learnedWindow(session: Session, route: Route): number | undefined {
  let smallest: number | undefined
  // Asked at every step boundary: the session's index of this kind, not a scan of the log (docs/performance.md).
  for (const event of session.all('context/window')) {
    if (event.data.provider !== route.provider || event.data.model !== route.model) continue
    smallest = Math.min(smallest ?? Infinity, event.data.contextWindow)
  }
  return smallest
}

/**
 * Learns the window a refusal states: logged once per smaller value (`context/window`, the session's truth
 * for the rest of it, resume included) and offered to the process's catalog. Returns the window in force.
 */
export function learnFromRefusal(
  llm: Llm,
  session: Session,
  route: Route,
  text: string,
  catalogWindow: number,
): number {
  const stated = statedWindow(text)
  const known = Math.min(catalogWindow || Infinity, learnedWindow(session, route) ?? Infinity)
  if (stated === undefined || stated >= known) return Number.isFinite(known) ? known : 0
  session.append('context/window', {
    provider: route.provider,
    model: route.model,
    contextWindow: stated,
    source: 'provider-error',
    text: text.slice(0, 500),
  })
  llm.offerWindow(route, stated)
  return stated
}
