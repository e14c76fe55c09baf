import { expect, test } from 'vitest'
import { eventually } from './world.ts'

test('eventually answers true the moment the check holds, even if the next look would not', async () => {
  const answers = [false, false, true, false]
  let looks = 0
  expect(await eventually(() => answers[looks++] ?? false, 5_000, 1)).toBe(true)
  expect(looks).toBe(3)
})

test('eventually answers false once the time is up without the check holding', async () => {
  const started = Date.now()
  expect(await eventually(() => false, 50, 5)).toBe(false)
  expect(Date.now() - started).toBeGreaterThanOrEqual(50)
})
