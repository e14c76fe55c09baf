import type { HookDecision, HookEventName, HookOutcome } from '@dsh/hooks'

/** How one hook's exit code and stdout read, in Claude Code's contract. */
export interface HookAnswer {
  decision: HookDecision
  reason?: string
  permission?: 'allow' | 'ask' | 'deny'
  updatedInput?: Record<string, unknown>
  context?: string
  stop?: string
  /** The hook could not do its job (it timed out, could not start): a guard must not be passed silently. */
  failure?: string
}

/** What a finished hook process gave back. */
export interface HookExit {
  exitCode: number | null
  stdout: string
  stderr: string
  timedOut: boolean
}

const isObject = (value: unknown): value is Record<string, any> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** Events whose plain stdout (exit 0, not JSON) Claude Code adds to the model's context. */
const STDOUT_IS_CONTEXT: readonly HookEventName[] = ['UserPromptSubmit', 'SessionStart']

const PERMISSIONS = ['allow', 'ask', 'deny'] as const

function parseJson(text: string): Record<string, any> | undefined {
  if (!text.startsWith('{')) return undefined
  try {
    const value = JSON.parse(text)
    return isObject(value) ? value : undefined
  } catch {
    return undefined
  }
}

/** The JSON output form: `hookSpecificOutput` first, then the top-level fields (and the older `decision: approve|block`). */
function readJson(event: HookEventName, json: Record<string, any>): HookAnswer {
  const specific = isObject(json.hookSpecificOutput) ? json.hookSpecificOutput : {}
  const answer: HookAnswer = { decision: 'pass' }
  const legacy =
    json.decision === 'approve' ? 'allow' : json.decision === 'block' && event === 'PreToolUse' ? 'deny' : undefined
  const permission = specific.permissionDecision ?? json.permissionDecision ?? legacy
  const reason = specific.permissionDecisionReason ?? json.permissionDecisionReason ?? json.reason
  if (typeof reason === 'string' && reason) answer.reason = reason
  if (PERMISSIONS.includes(permission)) answer.permission = permission
  const updated = specific.updatedInput ?? json.updatedInput
  if (isObject(updated)) answer.updatedInput = updated
  const context = specific.additionalContext ?? json.additionalContext
  if (typeof context === 'string' && context.trim()) answer.context = context
  if (json.decision === 'block' && event !== 'PreToolUse') answer.decision = 'block'
  else if (answer.permission) answer.decision = answer.permission
  else if (answer.context) answer.decision = 'context'
  if (json.continue === false) {
    answer.stop = typeof json.stopReason === 'string' && json.stopReason ? json.stopReason : 'a hook asked to stop'
    answer.decision = 'stop'
  }
  return answer
}

/** Reads one hook's exit: 0 passes (JSON on stdout may decide), 2 blocks with stderr, anything else is a non-blocking error. */
export function readExit(event: HookEventName, exit: HookExit, timeoutSeconds: number): HookAnswer {
  if (exit.timedOut)
    return {
      decision: 'error',
      reason: `timed out after ${timeoutSeconds} s and was killed`,
      failure: `timed out after ${timeoutSeconds} s`,
    }
  if (exit.exitCode === 2)
    return { decision: 'block', reason: exit.stderr.trim() || 'the hook exited 2 and gave no reason on stderr' }
  if (exit.exitCode !== 0)
    return { decision: 'error', reason: `exit ${exit.exitCode}${exit.stderr.trim() ? `: ${exit.stderr.trim()}` : ''}` }
  const stdout = exit.stdout.trim()
  const json = parseJson(stdout)
  if (json) return readJson(event, json)
  if (stdout && STDOUT_IS_CONTEXT.includes(event)) return { decision: 'context', context: stdout }
  return { decision: 'pass' }
}

const RANK = { allow: 1, ask: 2, deny: 3 } as const

/** Combines the answers of one event's hooks, in configuration order. */
export function combine(answers: HookAnswer[], describe: (index: number) => string): HookOutcome {
  const outcome: HookOutcome = { context: [], failures: [] }
  const blocks: string[] = []
  answers.forEach((answer, index) => {
    if (answer.decision === 'block') blocks.push(answer.reason ?? 'blocked')
    if (answer.permission && (!outcome.permission || RANK[answer.permission] > RANK[outcome.permission])) {
      outcome.permission = answer.permission
      if (answer.reason) outcome.permissionReason = answer.reason
      else delete outcome.permissionReason
    }
    if (answer.updatedInput && !outcome.updatedInput) outcome.updatedInput = answer.updatedInput
    if (answer.context) outcome.context.push(answer.context)
    if (answer.stop && outcome.stop === undefined) outcome.stop = answer.stop
    if (answer.failure) outcome.failures.push(`${describe(index)} ${answer.failure}`)
  })
  if (blocks.length) outcome.blocked = blocks.join('\n')
  return outcome
}
