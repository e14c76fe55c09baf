/** A push-based async iterable: producers `push`, `end` or `fail`; one consumer iterates. */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = []
  private waiting: ((result: IteratorResult<T>) => void) | undefined
  private failWaiting: ((error: unknown) => void) | undefined
  private done = false
  private error: unknown

  push(item: T): void {
    if (this.done) return
    if (this.waiting) this.settle().resolve({ value: item, done: false })
    else this.items.push(item)
  }

  end(): void {
    if (this.done) return
    this.done = true
    if (this.waiting) this.settle().resolve({ value: undefined, done: true })
  }

  fail(error: unknown): void {
    if (this.done) return
    this.done = true
    this.error = error
    if (this.waiting) this.settle().reject(error)
  }

  private settle() {
    const resolve = this.waiting!
    const reject = this.failWaiting!
    this.waiting = this.failWaiting = undefined
    return { resolve, reject }
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        if (this.items.length) return Promise.resolve({ value: this.items.shift()!, done: false })
        if (this.done)
          return this.error !== undefined
            ? Promise.reject(this.error)
            : Promise.resolve({ value: undefined, done: true })
        return new Promise((resolve, reject) => {
          this.waiting = resolve
          this.failWaiting = reject
        })
      },
    }
  }
}
