import type { Context } from '@dsh/cordis'
import type {} from '@dsh/credentials'
import type { ToolResultData } from './types.ts'

/** Tells the model why it sees a marker instead of text (added once, where a value was replaced). */
export const REDACTION_NOTE =
  '[dsh: a secret value in this result was replaced by a «redacted:NAME» marker naming its credential; secret values are never shown.]'

/** `text` with every credential value dsh knows replaced (identity when no credentials row is mounted). */
export function redactText(ctx: Context, text: string): string {
  return ctx.get('credentials')?.redact(text) ?? text
}

/**
 * A result with every known credential value replaced by its marker, in text and in the error message,
 * plus REDACTION_NOTE when something was replaced (docs/security.md: secret values never reach the model or the
 * log). The pipeline applies it to every result before it is logged, whatever path produced it.
 */
export function redactResult(ctx: Context, result: ToolResultData): ToolResultData {
  let replaced = false
  const clean = (text: string) => {
    const out = redactText(ctx, text)
    if (out !== text) replaced = true
    return out
  }
  const content = result.content.map((block) => (block.type === 'text' ? { ...block, text: clean(block.text) } : block))
  const error = result.error && { ...result.error, message: clean(result.error.message) }
  if (!replaced) return result
  return { ...result, content: [...content, { type: 'text', text: REDACTION_NOTE }], ...(error ? { error } : {}) }
}
