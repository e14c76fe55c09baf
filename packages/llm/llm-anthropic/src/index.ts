// The Anthropic model adapter (docs/architecture.md, "Models").
import type { Context } from '@dsh/cordis'
import type {} from '@dsh/llm'
import { AnthropicAdapter } from './adapter.ts'
import { Config } from './config.ts'

export { AnthropicAdapter, DEFAULT_BASE_URL, BASE_URL_ENV } from './adapter.ts'
export { EventReader } from './events.ts'
export { effortFields, toWireMessages } from './wire.ts'
export { Config }

export const name = 'llm-anthropic'
export const inject = ['llm', 'credentials', 'app']

export function apply(ctx: Context, config: Config) {
  ctx.llm.register(ctx, new AnthropicAdapter(ctx, config))
}
