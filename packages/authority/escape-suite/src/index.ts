import type { ScriptedResponse } from '@dsh/llm-scripted'
import { bootComposition, scriptedPatch, toolCall, type CompositionOptions, type Harness } from '@dsh/test-harness'

/** One step of an attack: the tool the hostile model calls and its arguments. */
export interface AttackStep {
  id: string
  tool: string
  args: unknown
}

export const bash = (id: string, command: string): AttackStep => ({ id, tool: 'bash', args: { command } })

/**
 * Boots the product composition a user gets by default (headless profile, workspace-write, bubblewrap)
 * with a scripted model that makes `steps` one call at a time, then says it is done. Only the model is fake.
 */
export async function bootAttack(
  steps: AttackStep[],
  options: CompositionOptions & { rows?: string } = {},
): Promise<Harness> {
  const h = await bootComposition({ ...options, patch: scriptedPatch({}, options.rows ?? '') })
  const script: ScriptedResponse[] = [...steps.map((step) => toolCall(step.id, step.tool, step.args)), { text: 'done' }]
  h.root.scriptedLlm.enqueue(...script)
  return h
}

/** Everything the model was shown by the end of the run, as one string: every tool result's text. */
export function modelSaw(h: Harness): string {
  return h
    .events('tool/result')
    .map((event) => JSON.stringify(event.data))
    .join('\n')
}
