import { createParser } from 'eventsource-parser'

/**
 * The `data` of each server-sent event in `body`, framed by a real SSE parser (comments and keep-alives are
 * skipped). `onBytes` is called whenever bytes arrive, so an idle watchdog sees a slow but living stream.
 */
export async function* sseData(body: ReadableStream<Uint8Array>, onBytes: () => void): AsyncGenerator<string> {
  const queue: string[] = []
  const parser = createParser({ onEvent: (event) => queue.push(event.data) })
  const decoder = new TextDecoder()
  const reader = body.getReader()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      onBytes()
      parser.feed(decoder.decode(value, { stream: true }))
      while (queue.length) yield queue.shift()!
    }
  } finally {
    // Stops the download when the consumer leaves early; a body that already failed has nothing to cancel.
    await reader.cancel().catch(() => {})
  }
}
