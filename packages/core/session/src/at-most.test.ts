import { expect, test } from 'vitest'
import { mapAtMost } from './at-most.ts'

test('mapAtMost keeps the order of the items and never has more than the limit in flight', async () => {
  let inFlight = 0
  let most = 0
  const results = await mapAtMost([50, 10, 30, 0, 20, 40], 3, async (delay) => {
    most = Math.max(most, ++inFlight)
    await new Promise((resolve) => setTimeout(resolve, delay))
    inFlight--
    return delay * 2
  })
  expect(results).toEqual([100, 20, 60, 0, 40, 80])
  expect(most).toBe(3)
  expect(await mapAtMost([], 4, async () => 1)).toEqual([])
})

test('mapAtMost rejects with the first failure', async () => {
  await expect(
    mapAtMost([1, 2, 3], 2, async (n) => (n === 2 ? Promise.reject(new Error('two failed')) : n)),
  ).rejects.toThrow('two failed')
})
