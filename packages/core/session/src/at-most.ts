/**
 * `fn` over `items` with at most `limit` calls in flight, results in the items' order: for reads of many
 * small files (a listing), where one after another waits on each round trip and all at once holds them all.
 */
export async function mapAtMost<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = Array.from<R>({ length: items.length })
  let next = 0
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) results[i] = await fn(items[i]!)
  }
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker))
  return results
}
