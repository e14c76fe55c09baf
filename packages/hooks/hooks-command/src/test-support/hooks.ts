import { onTestFinished } from 'vitest'
import type {} from '@dsh/hooks'
import type { LlmRequest } from '@dsh/llm'
import type {} from '@dsh/llm-scripted'
import { bootComposition, scriptedPatch, type CompositionOptions, type Harness } from '@dsh/test-harness'

/** One hook per group, as a Claude Code settings.json writes them: `{ hooks: { Event: [{ matcher, hooks: [{ type, command }] }] } }`. */
export function hooksFile(hooks: Record<string, { matcher?: string; command: string; timeout?: number }[]>): string {
  const groups = Object.entries(hooks).map(([event, list]) => [
    event,
    list.map(({ matcher, ...hook }) => ({
      ...(matcher !== undefined ? { matcher } : {}),
      hooks: [{ type: 'command', ...hook }],
    })),
  ])
  return JSON.stringify({ hooks: Object.fromEntries(groups) }, null, 2)
}

export async function boot(options: CompositionOptions & { rows?: string } = {}): Promise<Harness> {
  const { rows, ...rest } = options
  const h = await bootComposition({ ...rest, patch: scriptedPatch({}, rows) })
  onTestFinished(() => h.dispose())
  return h
}

/** Everything the model was sent in request `index`, as text (to look for what a hook said). */
export const requestText = (h: Harness, index: number) =>
  JSON.stringify((h.root.scriptedLlm.requests[index] as LlmRequest).messages)
