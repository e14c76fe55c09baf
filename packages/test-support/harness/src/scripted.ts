import type { ScriptedResponse } from '@dsh/llm-scripted'

export interface ScriptedPatchOptions {
  /** The scripted row's `config` (YAML flow text), e.g. `{ models: [{ id: scripted-1, contextWindow: 50000 }] }`. */
  config?: string
  /** Also mount the fixture tools (`echo`, `wait`, `write_file`, `read_file`). */
  fixtureTools?: boolean
  /** The model the `agents` route names (default `scripted-1`). */
  model?: string
  /**
   * Keep the `runtime-context` row (default false: it is disabled). Most tests assert exact histories and
   * requests; a runtime context message (cwd, git, …) in each of them would be noise. Tests of what the
   * product sends as a whole (and @dsh/runtime-context's own) turn it on.
   */
  runtimeContext?: boolean
}

/**
 * A patch row leaving out the runtime context (a user message naming the temp workspace and today's date):
 * for tests that compare whole requests exactly.
 */
export const WITHOUT_RUNTIME_CONTEXT = '- id: runtime-context\n  disabled: true\n'

/**
 * Every test composition starts with this layer: the title request after a first turn is an extra model
 * request that would take a scripted response meant for the next turn. A test about titles turns it back on
 * with the `sessions.autoTitle: true` setting.
 */
export const WITHOUT_AUTO_TITLE = '- id: session-admin\n  config: { autoTitle: false }\n'

/**
 * The patch most whole-product tests start from: the scripted model mounted and the `agents` row routed
 * to it, then `rows` (more YAML rows of the same list, written as in a `cordis.patch.yml`).
 */
export function scriptedPatch(options: ScriptedPatchOptions = {}, rows = ''): string {
  const config = options.config ? `\n      config: ${options.config}` : ''
  const tools = options.fixtureTools ? "\n    - id: fixture-tools\n      name: '@dsh/test-harness/fixture-tools'" : ''
  return `- insert:
    - id: scripted
      name: '@dsh/llm-scripted'${config}${tools}
- id: agents
  config: { route: { provider: scripted, model: ${options.model ?? 'scripted-1'} } }
${options.runtimeContext ? '' : WITHOUT_RUNTIME_CONTEXT}${rows}`
}

/** A scripted model response that calls one tool. */
export const toolCall = (id: string, name: string, args: unknown): ScriptedResponse => ({
  toolCalls: [{ id, name, arguments: args }],
})
