import type { Context } from '@dsh/cordis'
import type { LlmAdapter, Route } from '@dsh/llm'
import type {} from '@dsh/agent'
import type { ModelDescription, ProviderModels } from '@dsh/web-protocol'

/**
 * Every mounted provider's catalogue and whether it is ready (its key is set), so the picker can say
 * "(no key)" before a message fails. Readiness is the adapter's `ready()`: a yes/no and its message (which
 * names the variable), never a credential's value.
 */
export async function listProviders(ctx: Context): Promise<ProviderModels[]> {
  const fallback = ctx.agents.defaultRoute()
  return Promise.all(
    ctx.llm.providers().map(async (provider): Promise<ProviderModels> => {
      const adapter = ctx.llm.adapter(provider)
      let models: ModelDescription[] = []
      let error: string | undefined
      try {
        models = (await adapter.models()).map((model) => ({
          ...model,
          efforts: model.efforts ? [...model.efforts] : undefined,
        }))
      } catch (failure) {
        error = failure instanceof Error ? failure.message : String(failure)
      }
      // The provider's route the user would most likely pick: the default when it is this provider's.
      const route: Route = fallback.provider === provider ? fallback : { provider, model: models[0]?.id ?? '' }
      return { provider, models, ...(error !== undefined ? { error } : {}), ...(await readiness(adapter, route)) }
    }),
  )
}

async function readiness(adapter: LlmAdapter, route: Route): Promise<Pick<ProviderModels, 'ready' | 'notReady'>> {
  if (!adapter.ready) return { ready: true }
  try {
    const answer = await adapter.ready(route)
    return answer.ok
      ? { ready: true }
      : { ready: false, notReady: { code: answer.error.code, message: answer.error.message } }
  } catch (failure) {
    // A check that throws cannot vouch for the provider: fail closed, the picker still offers it.
    return {
      ready: false,
      notReady: { code: 'READY_CHECK_FAILED', message: failure instanceof Error ? failure.message : String(failure) },
    }
  }
}
