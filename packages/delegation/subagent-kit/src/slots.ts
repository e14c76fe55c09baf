/**
 * At most `limit()` tasks at a time; the rest wait in arrival order. A waiting task whose signal aborts
 * leaves the queue without running. The limit is read at each start, so a settings change applies next time.
 */
export class Slots {
  private running = 0
  private readonly waiting: { start: () => void; signal: AbortSignal }[] = []

  constructor(private readonly limit: () => number) {}

  async run<T>(signal: AbortSignal, task: () => Promise<T>): Promise<T> {
    await this.acquire(signal)
    try {
      return await task()
    } finally {
      this.running--
      this.next()
    }
  }

  private acquire(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason ?? new Error('aborted'))
    if (this.running < this.limit()) {
      this.running++
      return Promise.resolve()
    }
    return new Promise((resolve, reject) => {
      const entry = { start: () => (signal.removeEventListener('abort', onAbort), this.running++, resolve()), signal }
      const onAbort = () => {
        this.waiting.splice(this.waiting.indexOf(entry), 1)
        reject(signal.reason ?? new Error('aborted'))
      }
      signal.addEventListener('abort', onAbort, { once: true })
      this.waiting.push(entry)
    })
  }

  private next(): void {
    while (this.waiting.length && this.running < this.limit()) this.waiting.shift()!.start()
  }
}
