// The DeepSeek model adapter (docs/architecture.md, "Models").
import type { Context } from '@dsh/cordis'
import type {} from '@dsh/llm'
import { DeepSeekAdapter } from './adapter.ts'
import { Config } from './config.ts'

export { DeepSeekAdapter, DEFAULT_BASE_URL, BASE_URL_ENV } from './adapter.ts'
export { chatUsage as usageOf } from '@dsh/llm-kit'
export { effortFields, toWireMessages } from './wire.ts'
export { retryAfterMs } from '@dsh/llm-kit'
export { Config }

export const name = 'llm-deepseek'
export const inject = ['llm', 'credentials', 'app']

export function apply(ctx: Context, config: Config) {
  ctx.llm.register(ctx, new DeepSeekAdapter(ctx, config))
}
