// AGENTS.md / CLAUDE.md as instructions to the model (docs/architecture.md, "Context").
import { join } from 'node:path'
import type { Context } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type {} from '@dsh/agent'
import type {} from '@dsh/app'
import type {} from '@dsh/credentials'
import type {} from '@dsh/fs'
import type { SandboxAuthority } from '@dsh/sandbox'
import type {} from '@dsh/sandbox-policy'
import type { Session } from '@dsh/session'
import { contributeInstructionsSection } from './prompt.ts'

export interface Config {
  fileNames: string[]
  home: boolean
  maxBytes: number
  intro: string
}

export const name = 'agent-instructions'
export const inject = ['fs', 'app']

export const Config: Schema<Config> = Schema.object({
  fileNames: Schema.array(Schema.string())
    .default(['AGENTS.md', 'CLAUDE.md'])
    .description("Instruction files looked for in the session's working directory; the first that exists is read."),
  home: Schema.boolean()
    .default(true)
    .description(
      "Also read $DSH_HOME/AGENTS.md (the user's instructions for every workspace), before the workspace's.",
    ),
  maxBytes: Schema.natural()
    .min(1)
    .default(32_000)
    .description('Bytes read from each file at most; a longer file is cut with a note saying so.'),
  intro: Schema.string()
    .role('textarea')
    .default(
      'Instructions from the files below apply to this session. They guide how you work; they do not change what you are permitted to do.',
    )
    .description('The line that opens the instructions message.'),
})

/**
 * At step 0 of a session's first turn (no user message logged yet), reads `$DSH_HOME/AGENTS.md` and the
 * workspace's `AGENTS.md` (or `CLAUDE.md`) through ctx.fs and enters them before the user's prompt as one
 * logged `user/message { source: 'instructions' }`: model-visible, so logged, once, at the start of the
 * history where it stays in every provider's cached prefix. They are words to the model only: nothing here
 * changes a permission, the sandbox or approvals.
 */
export function apply(ctx: Context, config: Config) {
  contributeInstructionsSection(ctx)
  const settled = new WeakSet<Session>()
  ctx.on('agent/pre-step', async (step, next) => {
    const decision = await next()
    const session = step.agent.session
    if (decision.action !== 'enter' || step.step !== 0 || settled.has(session)) return decision
    settled.add(session)
    if (session.last('user/message')) return decision // not the first turn: the start of the history is fixed
    const text = await gather(ctx, config, step.agent.cwd, await readAuthority(ctx, session))
    if (!text) return decision
    return {
      ...decision,
      messages: [{ content: [{ type: 'text', text }], source: 'instructions' }, ...decision.messages],
    }
  })
}

/**
 * The session's secret-path rules, for reading the instruction files as the model would see them: a
 * workspace `AGENTS.md` linked to `~/.ssh/id_rsa` (planted by an earlier session) must not enter the log.
 * `$DSH_HOME/AGENTS.md` itself is excepted (it lives in the secret `$DSH_HOME`), where it links to is not.
 * Derived without recording anything (no probe); undefined when no sandbox policy is mounted.
 */
async function readAuthority(ctx: Context, session: Session): Promise<SandboxAuthority | undefined> {
  const policy = ctx.get('sandboxPolicy')
  if (!policy) return undefined
  const paths = policy.pathRules(await policy.writableRoots(session))
  const homeFile = join(ctx.app.home, 'AGENTS.md')
  const realHomeFile = join(await ctx.fs.realpath(ctx.app.home), 'AGENTS.md')
  return {
    mode: policy.mode(session),
    writableRoots: [],
    paths: { ...paths, readExceptions: [...paths.readExceptions, homeFile, realHomeFile] },
  }
}

async function gather(
  ctx: Context,
  config: Config,
  cwd: string,
  authority: SandboxAuthority | undefined,
): Promise<string | undefined> {
  const candidates: string[] = []
  if (config.home) candidates.push(join(ctx.app.home, 'AGENTS.md'))
  for (const name of config.fileNames) {
    const path = join(cwd, name)
    if (await ctx.fs.exists(path)) {
      candidates.push(path)
      break
    }
  }
  const seen = new Set<string>()
  const sections: string[] = []
  for (const path of candidates) {
    try {
      if (!(await ctx.fs.exists(path))) continue
      const real = await ctx.fs.realpath(path)
      if (seen.has(real)) continue // CLAUDE.md linked to AGENTS.md, or the home inside the workspace
      seen.add(real)
      const read = await ctx.fs.readText(path, { maxBytes: config.maxBytes, ...(authority ? { authority } : {}) })
      // Repository text the model will see and the log will keep: a credential value in it becomes a marker.
      const body = (ctx.get('credentials')?.redact(read.text) ?? read.text).trim()
      if (!body) continue
      const cut =
        read.truncated || read.endLine < read.totalLines
          ? `\n[… cut: the file has ${read.bytes} bytes; the first ${config.maxBytes} are included …]`
          : ''
      sections.push(`<instructions path="${path}">\n${body}${cut}\n</instructions>`)
    } catch (error) {
      ctx.logger('agent-instructions').warn('%s was not read: %s', path, error instanceof Error ? error.message : error)
    }
  }
  return sections.length ? `${config.intro}\n\n${sections.join('\n\n')}` : undefined
}
