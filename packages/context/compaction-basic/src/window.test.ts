import { expect, test } from 'vitest'
import { statedWindow } from './window.ts'

test("the window is read from each provider's own refusal wording, and a text naming none gives nothing", () => {
  expect(
    statedWindow("This model's maximum context length is 131072 tokens. However, you requested 140000 tokens."),
  ).toBe(131_072)
  expect(statedWindow('prompt is too long: 210345 tokens > 200000 maximum')).toBe(200_000)
  expect(
    statedWindow(
      'input length and `max_tokens` exceed context limit: 187254 + 20000 > 200000, decrease input length or `max_tokens` and try again',
    ),
  ).toBe(200_000)
  expect(statedWindow('the context window is 65,536 tokens')).toBe(65_536)
  expect(statedWindow('prompt is too long')).toBeUndefined()
  expect(statedWindow('maximum context length is 0 tokens')).toBeUndefined()
})
