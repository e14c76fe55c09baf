// Memory across sessions (issue #33 item 4; docs/architecture.md, "Memory").
import type { Context } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type {} from '@dsh/agent'
import type {} from '@dsh/commands'
import {
  MemoryChangedData,
  MemoryDecidedData,
  MemoryLoadedData,
  MemoryProposedData,
  type MemoryFile,
} from '@dsh/memory'
import { deriveEntries, type Session, type SessionEventMap } from '@dsh/session'
import { memoryCommand } from './command.ts'
import { gatherMemory } from './load.ts'
import { contributeMemorySection } from './prompt.ts'
import { ACCEPT_MODES, defineMemorySettings, type AcceptMode } from './settings.ts'
import { memoryTool } from './tool.ts'

export { gatherMemory, memoryText } from './load.ts'
export { MEMORY_SECTION } from './prompt.ts'

/** A preview of the memory a new session in `cwd` would log (`dsh prompt show`); the listener fills `result`. */
export interface MemoryPreview {
  cwd: string
  result?: SessionEventMap['memory/loaded']
}

declare module '@dsh/cordis' {
  interface Events {
    /** @mode serial — the tool-memory row reads what a new session in `request.cwd` would log into `request.result`. */
    'memory/preview'(request: MemoryPreview): Promise<void>
  }
}

export interface Config {
  accept: AcceptMode
  maxBytes: number
  maxEntryChars: number
  intro: string
}

export const name = 'tool-memory'
export const inject = ['tools', 'sessions', 'memory', 'settings']

export const Config: Schema<Config> = Schema.object({
  accept: Schema.union(ACCEPT_MODES)
    .default('ask')
    .description('Default of the memory.accept setting: `ask` a person about each proposal, `auto` accept them all.'),
  maxBytes: Schema.natural().min(1).default(8_000).description('Default of the memory.maxBytes setting (per file).'),
  maxEntryChars: Schema.natural().min(1).default(500).description('Default of the memory.maxEntryChars setting.'),
  intro: Schema.string()
    .role('textarea')
    .default(
      'Memory: notes the user keeps across sessions (entries they wrote or accepted). They are standing facts and preferences for how you work; they do not change what you are permitted to do.',
    )
    .description('The line that opens the memory message a new session reads.'),
})

/**
 * When a new session's first step is entered (`agent/pre-step`, step 0, nothing said yet), reads the user's
 * and the workspace's memory and logs it as `memory/loaded`, whose content the request derives from
 * (`CONTEXT_KINDS` of @dsh/session), before the user's first words. A resumed session has its own copy in the
 * log; one summarized away by a compaction is logged again as it was (never re-read). The `memory` tool
 * proposes an entry a person accepts; `/memory` views and changes the files.
 */
export function apply(ctx: Context, config: Config) {
  // Ignorable: a composition without this row still opens the log; the history folds memory/loaded either way.
  ctx.sessions.defineKind(ctx, 'memory/loaded', { ignorable: true, schema: MemoryLoadedData })
  ctx.sessions.defineKind(ctx, 'memory/proposed', { ignorable: true, schema: MemoryProposedData })
  ctx.sessions.defineKind(ctx, 'memory/decided', { ignorable: true, schema: MemoryDecidedData })
  ctx.sessions.defineKind(ctx, 'memory/changed', { ignorable: true, schema: MemoryChangedData })
  defineMemorySettings(ctx, config)
  contributeMemorySection(ctx)
  ctx.on('memory/preview', async (request) => {
    const loaded = await gatherMemory(ctx, request.cwd, config.intro)
    if (loaded) request.result = loaded
  })
  ctx.on('agent/pre-step', async (step, next) => {
    const decision = await next()
    if (decision.action !== 'enter' || step.step !== 0) return decision
    const session = step.agent.session
    const last = session.last('memory/loaded')
    if (last) {
      if (!visible(session, last.seq)) session.append('memory/loaded', last.data)
    } else if (!session.last('user/message')) {
      const loaded = await gatherMemory(ctx, step.agent.cwd, config.intro)
      if (loaded) session.append('memory/loaded', loaded)
    }
    return decision
  })
  ctx.tools.register(ctx, memoryTool(ctx))
  ctx.inject(['commands'], (inner) => inner.commands.register(inner, memoryCommand(inner)))
}

/** Whether the event at `seq` is still in the model's history (not summarized away). */
function visible(session: Session, seq: number): boolean {
  return deriveEntries(session.events).some((entry) => entry.seq === seq)
}

export type { MemoryFile }
