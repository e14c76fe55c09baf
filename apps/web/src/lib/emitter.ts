import { useSyncExternalStore } from 'react'

/** A change signal stores raise; components read the store's current value when it fires. */
export class Emitter {
  private readonly listeners = new Set<() => void>()
  private version = 0

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  readonly snapshot = (): number => this.version

  emit(): void {
    this.version++
    for (const listener of this.listeners) listener()
  }
}

/** Re-renders the component whenever `emitter` fires. */
export function useEmitter(emitter: Emitter): number {
  return useSyncExternalStore(emitter.subscribe, emitter.snapshot)
}
