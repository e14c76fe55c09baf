// Settings, credentials and the composition over the web host (docs/architecture.md, "Surfaces").
import type { Context } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type {} from '@dsh/app'
import { assertCredentialName } from '@dsh/credentials'
import type { SettingEntry } from '@dsh/settings'
import type { CredentialView, Methods, SettingView } from '@dsh/web-protocol'
import { WebError } from '@dsh/webserver'
import { parseDump } from './composition.ts'
import { mcpServers } from './mcp.ts'

export { parseDump } from './composition.ts'

export interface Config {
  credentials: { provider: string; name: string }[]
}

export const Config: Schema<Config> = Schema.object({
  credentials: Schema.array(Schema.object({ provider: Schema.string().required(), name: Schema.string().required() }))
    .default([
      { provider: 'deepseek', name: 'DEEPSEEK_API_KEY' },
      { provider: 'anthropic', name: 'ANTHROPIC_API_KEY' },
      { provider: 'openai', name: 'OPENAI_API_KEY' },
    ])
    .description(
      'The keys the settings page offers to set, by provider. Only these names can be written from the page.',
    ),
})

export const name = 'web-settings'
export const inject = ['app', 'webserver', 'settings', 'credentials']

const toView = (entry: SettingEntry): SettingView => ({ ...entry, ...(entry.origin ? { origin: entry.origin } : {}) })

export function apply(ctx: Context, config: Config) {
  const web = ctx.webserver
  type M<K extends keyof Methods> = Methods[K]

  const settingView = (key: string): SettingView => {
    const entry = ctx.settings.list().find((candidate) => candidate.key === key)
    if (!entry) throw new WebError('NOT_FOUND', `no mounted plugin defines the setting "${key}"`)
    return toView(entry)
  }
  const credentialView = async (name: string): Promise<CredentialView> => {
    const status = await ctx.credentials.describe(name)
    const provider = config.credentials.find((entry) => entry.name === name)?.provider
    return {
      ...(provider ? { provider } : {}),
      name,
      set: status.set,
      source: status.source,
      ...(status.location ? { location: status.location } : {}),
      howToSet: ctx.credentials.howToSet(name),
    }
  }
  // Fail closed: the page may write only the keys this row names, never an arbitrary variable.
  const offered = (name: string) => {
    assertCredentialName(name)
    if (!config.credentials.some((entry) => entry.name === name))
      throw new WebError(
        'BAD_PARAMS',
        `${name} is not one of the keys the settings page manages (${config.credentials.map((entry) => entry.name).join(', ')})`,
      )
  }

  web.method<M<'settings.list'>['params'], M<'settings.list'>['result']>(ctx, 'settings.list', {
    handle: () => ({ settings: ctx.settings.list().map(toView) }),
  })

  web.method<M<'settings.set'>['params'], M<'settings.set'>['result']>(ctx, 'settings.set', {
    localOnly: true,
    handle: async ({ key, value }) => {
      settingView(key)
      await ctx.settings.set(key, value as never)
      return { setting: settingView(key) }
    },
  })

  web.method<M<'settings.reset'>['params'], M<'settings.reset'>['result']>(ctx, 'settings.reset', {
    localOnly: true,
    handle: async ({ key }) => {
      settingView(key)
      await ctx.settings.reset(key)
      return { setting: settingView(key) }
    },
  })

  web.method<M<'mcp.servers'>['params'], M<'mcp.servers'>['result']>(ctx, 'mcp.servers', {
    handle: async ({ cwd, sessionId }) => ({ servers: await mcpServers(ctx, cwd ?? ctx.app.cwd, sessionId) }),
  })

  web.method<M<'credentials.list'>['params'], M<'credentials.list'>['result']>(ctx, 'credentials.list', {
    handle: async () => ({
      credentials: await Promise.all(config.credentials.map((entry) => credentialView(entry.name))),
    }),
  })

  web.method<M<'credentials.set'>['params'], M<'credentials.set'>['result']>(ctx, 'credentials.set', {
    localOnly: true,
    handle: async ({ name, value }) => {
      offered(name)
      if (!value.trim()) throw new WebError('BAD_PARAMS', `the value for ${name} is empty (use remove to unset it)`)
      await ctx.credentials.set(name, value.trim())
      return { credential: await credentialView(name) }
    },
  })

  web.method<M<'credentials.remove'>['params'], M<'credentials.remove'>['result']>(ctx, 'credentials.remove', {
    localOnly: true,
    handle: async ({ name }) => {
      offered(name)
      await ctx.credentials.remove(name)
      return { credential: await credentialView(name) }
    },
  })

  web.method<M<'composition.get'>['params'], M<'composition.get'>['result']>(ctx, 'composition.get', {
    handle: () => {
      const text = ctx.app.dumpConfig()
      return { text, ...parseDump(text) }
    },
  })
}
