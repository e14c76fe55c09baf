import type { Context } from '@dsh/cordis'
import type { LlmRequest, Route, StreamChunk, ToolSchema } from '@dsh/llm'

/** A small tool schema for requests that need one (adapters' wire tests). */
export const ECHO_TOOL: ToolSchema = {
  name: 'echo',
  description: 'Returns its text.',
  parameters: { type: 'object', properties: { text: { type: 'string' } } },
}

/**
 * Streams one request straight through `ctx.llm` (no agent, no turn) and returns every chunk: for tests of
 * what an adapter sends on the wire for a given request field.
 */
export async function streamOnce(
  root: Context,
  request: { route: Route } & Partial<Omit<LlmRequest, 'route' | 'signal'>>,
): Promise<StreamChunk[]> {
  const chunks: StreamChunk[] = []
  const full: LlmRequest = {
    system: 'be brief',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
    tools: [],
    origin: { sessionless: 'an adapter wire test' },
    ...request,
    signal: new AbortController().signal,
  }
  for await (const chunk of root.llm.stream(full)) chunks.push(chunk)
  return chunks
}
