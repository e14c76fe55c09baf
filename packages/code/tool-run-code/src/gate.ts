/**
 * The order a program's calls run in, as the pipeline orders one model response's (docs/architecture.md,
 * "Tools"): calls of `concurrencySafe` tools may run together; any other call waits for every call before it
 * and holds back every call after it.
 */
export class CallGate {
  private tail: Promise<void> = Promise.resolve()
  private readonly shared = new Set<Promise<void>>()

  run<T>(exclusive: boolean, task: () => Promise<T>): Promise<T> {
    if (exclusive) {
      const before = Promise.allSettled([this.tail, ...this.shared])
      this.shared.clear()
      const running = before.then(task)
      this.tail = running.then(
        () => {},
        () => {},
      )
      return running
    }
    const running = this.tail.then(task)
    const tracked = running.then(
      () => {},
      () => {},
    )
    this.shared.add(tracked)
    void tracked.then(() => this.shared.delete(tracked))
    return running
  }
}
