// The OpenAI-compatible model adapter (docs/architecture.md, "Models").
import type { Context } from '@dsh/cordis'
import type {} from '@dsh/llm'
import { OpenAIAdapter } from './adapter.ts'
import { Config } from './config.ts'

export { OpenAIAdapter, DEFAULT_BASE_URL, BASE_URL_ENV } from './adapter.ts'
export { chatUsage as usageOf } from '@dsh/llm-kit'
export { toWireMessages } from './wire.ts'
export { Config }

export const name = 'llm-openai'
export const inject = ['llm', 'credentials', 'app']

export function apply(ctx: Context, config: Config) {
  ctx.llm.register(ctx, new OpenAIAdapter(ctx, config))
}
