// Plugins an agent preset mounts for one agent (docs/architecture.md, "Agent presets").
import { type Context, FIBER_STATE, Service } from '@dsh/cordis'
import type {} from '@dsh/system-prompt'
import type {} from '@dsh/tools'

/**
 * The export (or static) by which a package says its plugin may be mounted in one agent's scope: it only
 * registers tools, prompt sections and listeners, which the agent's scope makes the agent's own. A provider
 * of a service (the fs, a model adapter) never says so: a preset cannot replace what every agent shares.
 */
export const MOUNTS_PER_AGENT = 'mountsPerAgent'

/** A preset plugin with its loaded module and config. */
export interface ResolvedPlugin {
  name: string
  plugin: unknown
  config: Record<string, unknown> | undefined
}

/** Why `config` does not fit the plugin's schema (unknown keys included), or undefined. */
export function configProblem(plugin: unknown, config: Record<string, unknown> | undefined): string | undefined {
  const schema = (plugin as { Config?: any }).Config
  if (typeof schema !== 'function')
    return config && Object.keys(config).length ? 'this plugin takes no config' : undefined
  try {
    schema(config ?? {})
  } catch (error) {
    return (error instanceof Error ? error.message : String(error)).replace(/^\$\.?\S*\s/, '')
  }
  const known = schema.type === 'object' && schema.dict ? Object.keys(schema.dict) : undefined
  const unknown = known && Object.keys(config ?? {}).find((key) => !known.includes(key))
  return unknown
    ? `config.${unknown} is not a setting of this plugin (known: ${known.join(', ') || 'none'})`
    : undefined
}

/**
 * `service` as one agent sees it: `method` (`register`, `section`) always adds for `agentId`, whatever the
 * caller passes; everything else is the shared service. Without cordis's tracker, so the realm hands it out
 * as it is.
 */
function forAgent<T extends object>(service: T, method: string, agentId: string): T {
  return new Proxy(service, {
    get(target, key) {
      if (key === Service.tracker) return undefined
      if (key === method)
        return (ctx: Context, item: unknown, options: object = {}) =>
          (target as any)[method](ctx, item, { ...options, agentId })
      const value = Reflect.get(target, key)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

/**
 * Mounts `plugins` in the agent's scope (so they end with the agent), in a realm whose `tools` and
 * `systemPrompt` register for that agent alone: its `bash` shadows the profile's for it and no other agent.
 * Settles once every plugin is active; rejects naming the first that failed or waits for a missing service.
 */
export function mountForAgent(scope: Context, agentId: string, presetName: string, plugins: ResolvedPlugin[]) {
  return scope.plugin({
    name: `agent-preset:${presetName}`,
    inject: ['tools', 'systemPrompt'],
    async apply(ctx: Context) {
      const realm = ctx.isolate('tools').isolate('systemPrompt')
      const tools = forAgent(ctx.tools, 'register', agentId)
      const prompt = forAgent(ctx.systemPrompt, 'section', agentId)
      // Provided from inside the realm: cordis wakes the plugins waiting for a service only in the realm of the
      // fiber that provides it.
      await realm.plugin({ name: 'agent-tools', apply: (inner: Context) => void inner.provide('tools', tools) })
      await realm.plugin({
        name: 'agent-system-prompt',
        apply: (inner: Context) => void inner.provide('systemPrompt', prompt),
      })
      for (const { name, plugin, config } of plugins) {
        const fiber = realm.plugin(plugin as any, config)
        await fiber
        if (fiber.state !== FIBER_STATE.ACTIVE)
          throw new Error(`plugin "${name}" did not start: it waits for a service this profile does not mount`)
      }
    },
  })
}
