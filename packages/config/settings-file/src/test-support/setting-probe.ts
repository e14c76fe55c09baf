import type { Context } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type {} from '@dsh/settings'

// A row for composition tests: defines one natural-number setting the way a real plugin would.
export interface Config {
  key: string
  default: number
}

export const name = 'setting-probe'
export const inject = ['settings']
export const Config: Schema<Config> = Schema.object({
  key: Schema.string().required(),
  default: Schema.natural().default(10),
})

export function apply(ctx: Context, config: Config) {
  ctx.settings.define(config.key, Schema.natural().default(config.default), {
    description: `probe setting ${config.key}`,
  })
}
