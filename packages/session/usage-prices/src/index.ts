// The price table of every usage view (docs/architecture.md, "Usage and cost"): one owner, so `dsh usage`,
// the headless result line, the web host and ACP price the same tokens the same.
import { Service, type Context } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type {} from '@dsh/settings'
import type { ModelPrice, PriceTable } from '@dsh/usage-kit'
import { SHIPPED_PRICES } from './shipped.ts'

export { SHIPPED_PRICES } from './shipped.ts'

declare module '@dsh/cordis' {
  interface Context {
    usagePrices: UsagePrices
  }
}

declare module '@dsh/settings' {
  interface Settings {
    'usage.prices': PriceTable
  }
}

const usd = () => Schema.number().min(0)

/** A price table: `provider/model` → USD per million input, cached input, output (and optionally cache-write) tokens. */
export const PriceTableSchema: Schema<PriceTable> = Schema.dict(
  Schema.object({
    input: usd().required().description('USD per million input tokens (not read from or written to a cache).'),
    cachedInput: usd().required().description('USD per million input tokens read from the cache.'),
    output: usd().required().description('USD per million output tokens (reasoning included).'),
    cacheWrite: usd().description('USD per million input tokens written to the cache; absent: the input price.'),
  }) as Schema<ModelPrice>,
)

export interface Config {
  prices: PriceTable
}

/**
 * Owns: the effective price table (the row's table, then the user's per-model overrides). Must not own: how
 * usage is summed (that is `@dsh/usage-kit`, pure) or where it is shown.
 */
export class UsagePrices extends Service {
  static inject = ['settings']
  static Config: Schema<Config> = Schema.object({
    prices: PriceTableSchema.default(SHIPPED_PRICES).description(
      'Prices of the catalog models (see shipped.ts for their date and source); the `usage.prices` setting overrides them per model.',
    ),
  })

  constructor(
    ctx: Context,
    private readonly config: Config,
  ) {
    super(ctx, 'usagePrices')
    ctx.settings.define('usage.prices', PriceTableSchema.default({}), {
      description:
        'Prices per `provider/model` (USD per million input, cachedInput, output and optionally cacheWrite tokens), each replacing the shipped price of that model. A model without a price shows its tokens and "no price".',
    })
  }

  /** The table in force now: shipped (or the row's) prices, each model the user set replaced. */
  table(): PriceTable {
    return { ...this.config.prices, ...this.ctx.settings.get('usage.prices') }
  }
}

export default UsagePrices
