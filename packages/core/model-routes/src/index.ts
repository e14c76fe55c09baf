// Routes as settings and as promises kept (docs/architecture.md, "Models").
import type { Context } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type { RequestDraft } from '@dsh/agent'
import { EFFORTS, type Effort, type Route } from '@dsh/llm'
import type {} from '@dsh/settings'
import { refusal } from './check.ts'

export { newImages, refusal } from './check.ts'

declare module '@dsh/settings' {
  interface Settings {
    'model.provider': string
    'model.name': string
    'model.effort': '' | Effort
  }
}

export interface Config {
  provider: string
  model: string
  effort: '' | Effort
}

export const Config: Schema<Config> = Schema.object({
  provider: Schema.string()
    .default('')
    .description("Default of the `model.provider` setting; empty: the `agents` row's route applies."),
  model: Schema.string()
    .default('')
    .description("Default of the `model.name` setting; empty: the `agents` row's route applies."),
  effort: Schema.union(['', ...EFFORTS] as const)
    .default('')
    .description("Default of the `model.effort` setting; empty: the model's own default."),
})

/** The route the settings name, or why they name none. */
export function settingsRoute(
  provider: string,
  model: string,
  effort: '' | Effort,
): { route?: Route; problem?: string } {
  if (!provider && !model)
    return effort
      ? { problem: 'model.effort is set but model.provider and model.name are not, so it is not applied' }
      : {}
  if (!provider || !model)
    return {
      problem: `${provider ? 'model.name' : 'model.provider'} is not set, so the settings name no route (set both)`,
    }
  return { route: { provider, model, ...(effort ? { effort } : {}) } }
}

export const name = 'model-routes'
export const inject = ['settings', 'llm']

export function apply(ctx: Context, config: Config) {
  const log = ctx.logger('model-routes')
  ctx.settings.define('model.provider', Schema.string().default(config.provider), {
    description: 'Model provider of new sessions (deepseek, anthropic, openai, …); empty: the configured default.',
  })
  ctx.settings.define('model.name', Schema.string().default(config.model), {
    description: 'Model of new sessions, as its provider names it; empty: the configured default.',
  })
  ctx.settings.define('model.effort', Schema.union(['', ...EFFORTS] as const).default(config.effort), {
    description: "Reasoning effort of new sessions (off, low, high, max); empty: the model's default.",
  })

  // The route of new sessions (ctx.agents logs it as the session's first `model/route`).
  ctx.on('agent/default-route', () => {
    const { route, problem } = settingsRoute(
      ctx.settings.get('model.provider'),
      ctx.settings.get('model.name'),
      ctx.settings.get('model.effort'),
    )
    if (problem) log.warn('%s', problem)
    return route
  })

  // Checked after every other listener had its say (prepend: ours runs first, so its code after next() runs last).
  ctx.on(
    'agent/request',
    async (draft: RequestDraft, next) => {
      await next()
      const problem = refusal(ctx.llm, draft.request.route, draft.agent.session)
      if (problem) throw problem
    },
    { prepend: true },
  )
}
