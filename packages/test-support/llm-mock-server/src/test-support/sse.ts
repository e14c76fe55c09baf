// Test helpers: plain fetch plus a real SSE parser, so tests see the wire exactly as a client does.
import { createParser } from 'eventsource-parser'

export interface SseEvent {
  /** the `event:` name (Anthropic names every event; OpenAI-style streams name none) */
  event?: string
  data: string
}

export async function post(url: string, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal,
  })
}

/**
 * Reads a response's SSE events. `onEvent` sees each as it arrives. When the body fails (a cut socket,
 * an abort) the events read so far are returned with the error instead of throwing.
 */
export async function readSse(
  response: Response,
  onEvent?: (event: SseEvent, all: SseEvent[]) => void,
): Promise<{ events: SseEvent[]; error?: Error }> {
  const events: SseEvent[] = []
  const parser = createParser({
    onEvent(message) {
      const event = message.event === undefined ? { data: message.data } : { event: message.event, data: message.data }
      events.push(event)
      onEvent?.(event, events)
    },
  })
  const decoder = new TextDecoder()
  const reader = response.body!.getReader()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      parser.feed(decoder.decode(value, { stream: true }))
    }
  } catch (error) {
    return { events, error: error as Error }
  }
  return { events }
}

/** The JSON payloads of the events (`[DONE]` stays a string). */
export const payloads = (events: SseEvent[]) =>
  events.map((event) => (event.data === '[DONE]' ? event.data : JSON.parse(event.data)))

/** A response's JSON body, loosely typed for assertions. */
export const json = (response: Response): Promise<any> => response.json()
