import type { Context } from '@dsh/cordis'
import Schema from '@dsh/schemastery'
import type { MemoryLimits } from '@dsh/memory'
import type {} from '@dsh/settings'

export const ACCEPT_MODES = ['ask', 'auto'] as const
export type AcceptMode = (typeof ACCEPT_MODES)[number]

declare module '@dsh/settings' {
  interface Settings {
    'memory.accept': AcceptMode
    'memory.maxBytes': number
    'memory.maxEntryChars': number
  }
}

export interface SettingDefaults {
  accept: AcceptMode
  maxBytes: number
  maxEntryChars: number
}

/** The three settings this row reads, with the row's config as their defaults. */
export function defineMemorySettings(ctx: Context, defaults: SettingDefaults): void {
  ctx.settings.define('memory.accept', Schema.union(ACCEPT_MODES).default(defaults.accept), {
    description:
      'Who accepts an entry the model proposes with the memory tool: `ask` a person (declined when nobody can answer), `auto` accept every proposal.',
  })
  ctx.settings.define('memory.maxBytes', Schema.natural().min(1).default(defaults.maxBytes), {
    description: 'Bytes one memory file (the user one, each workspace one) may hold; a proposal past it is refused.',
  })
  ctx.settings.define('memory.maxEntryChars', Schema.natural().min(1).default(defaults.maxEntryChars), {
    description: 'Characters one memory entry may have.',
  })
}

export function memoryLimits(ctx: Context): MemoryLimits {
  return { maxBytes: ctx.settings.get('memory.maxBytes'), maxEntryChars: ctx.settings.get('memory.maxEntryChars') }
}
