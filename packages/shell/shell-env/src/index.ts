// The user's environment policy for model-started processes (docs/architecture.md, "Authority").
import type { Context } from '@dsh/cordis'
import { checkEnvPolicy, type EnvPolicy } from '@dsh/env-policy'
import Schema from '@dsh/schemastery'
import type { Session } from '@dsh/session'
import type {} from '@dsh/settings'
import type {} from '@dsh/subprocess'
import type { ToolInvocation } from '@dsh/tools'
import { EnvPolicyRecordData, policyRecord } from './record.ts'

export type { EnvPolicyRecord } from './record.ts'

declare module '@dsh/settings' {
  interface Settings {
    'shell.env.include': string[]
    'shell.env.exclude': string[]
    'shell.env.set': Record<string, string>
  }
}

export interface Config {
  include: string[]
  exclude: string[]
  set: Record<string, string>
}

/** A schema that refuses what checkEnvPolicy refuses, naming the setting. */
const checked = <T>(inner: Schema<T>, field: keyof EnvPolicy) =>
  Schema.transform(inner, (value: T) => {
    const problem = checkEnvPolicy({ include: [], exclude: [], set: {}, [field]: value })
    if (problem) throw new TypeError(problem)
    return value
  })

const IncludePatterns = checked(Schema.array(Schema.string()), 'include')
const ExcludePatterns = checked(Schema.array(Schema.string()), 'exclude')
const SetVariables = checked(Schema.dict(Schema.string()), 'set')

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  include: IncludePatterns.default([]).description('Default of `shell.env.include`.'),
  exclude: ExcludePatterns.default([]).description('Default of `shell.env.exclude`.'),
  set: SetVariables.default({}).description('Default of `shell.env.set`.'),
})

export const name = 'shell-env'
export const inject = ['settings', 'subprocess', 'sessions', 'tools']

/**
 * Owns the `shell.env.*` settings and the `shell/env-policy` kind. Supplies the policy they describe to
 * ctx.subprocess, which applies it to every child (the allow-list and the secret-name rule are its own and
 * cannot be widened here). Logs the policy in force, by name only, before a session's first tool call and
 * again whenever it changes. Must not own: applying the policy (ctx.subprocess) or redaction (ctx.credentials).
 */
export function apply(ctx: Context, config: Config) {
  ctx.settings.define('shell.env.include', IncludePatterns.default(config.include), {
    description:
      'Variable names or globs (*, ?; case-insensitive) that commands inherit beyond PATH, HOME, USER, LOGNAME, LANG, LC_*, TERM, TZ, SHELL and TMPDIR. Secret-looking names (*KEY*, *TOKEN*, *SECRET*, …) are never inherited.',
  })
  ctx.settings.define('shell.env.exclude', ExcludePatterns.default(config.exclude), {
    description: 'Variable names or globs never passed to commands, even when included or set by a shell.',
  })
  ctx.settings.define('shell.env.set', SetVariables.default(config.set), {
    description: 'Variables (name: value) set for every command. Shown in clear: a secret-looking name is refused.',
  })
  ctx.sessions.defineKind(ctx, 'shell/env-policy', { ignorable: true, schema: EnvPolicyRecordData })

  const policy = (): EnvPolicy => ({
    include: ctx.settings.get('shell.env.include'),
    exclude: ctx.settings.get('shell.env.exclude'),
    set: ctx.settings.get('shell.env.set'),
  })
  ctx.subprocess.usePolicy(ctx, policy)

  const record = (session: Session) => {
    if (session.closed) return
    const current = ctx.subprocess.policy()
    const entry = policyRecord(current, ctx.subprocess.environment())
    const last = session.last('shell/env-policy')?.data
    if (!last || JSON.stringify(last) !== JSON.stringify(entry)) session.append('shell/env-policy', entry)
  }
  ctx.on('tools/execute', async (invocation: ToolInvocation, next) => {
    record(invocation.context.session)
    return next()
  })
}
