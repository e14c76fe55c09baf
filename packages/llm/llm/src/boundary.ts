import { createHash } from 'node:crypto'
import { isDeepStrictEqual } from 'node:util'
import { LlmError, type ImageBlock, type LlmRequest, type Message, type TextBlock } from './vocabulary.ts'

/**
 * The check every request passes at the `llm/stream` boundary (docs/architecture.md, "The session log"): the
 * first and the last step of the waterfall. Mounted by `@dsh/invariants`, which derives the request afresh
 * from its origin's log.
 */
export interface RequestGuard {
  /** The first difference between `request` and what its origin derives, named; undefined when it matches. */
  check(request: Readonly<LlmRequest>): string | undefined
}

/**
 * A deterministic step after the last check: replaces image references (`sha256`) by what the route
 * receives, the stored bytes inline or a text substitute. The service accepts no other change.
 */
export interface RequestEncoder {
  encode(request: Readonly<LlmRequest>): Promise<Message[]>
}

export const violation = (problem: string, options?: ErrorOptions) =>
  new LlmError(
    'INVARIANT_VIOLATION',
    `request refused: ${problem} (model-visible input must come from the session log)`,
    {},
    options,
  )

/**
 * Values known to be plain data, deeply frozen, with no accessors: what `seal` checked. A sealed value cannot
 * change, so a copy of a request may share it instead of cloning it (docs/architecture.md, "The session log":
 * the request check costs what changed since the last request, not the whole history).
 */
const sealedValues = new WeakSet<object>()

/**
 * Deep-freezes plain data and remembers it as unchangeable. Refuses what freezing cannot make constant: a
 * getter or setter (it could answer the check one thing and the adapter another), a class instance, symbol keys.
 */
export function seal<T>(value: T): T {
  if (!value || typeof value !== 'object' || sealedValues.has(value)) return value
  const proto = Object.getPrototypeOf(value)
  if (!(Array.isArray(value) ? proto === Array.prototype : proto === Object.prototype || proto === null))
    throw new TypeError('only plain objects and arrays can be sealed')
  if (Object.getOwnPropertySymbols(value).length) throw new TypeError('a sealed value has no symbol keys')
  for (const descriptor of Object.values(Object.getOwnPropertyDescriptors(value))) {
    if (!('value' in descriptor)) throw new TypeError('a sealed value has no getters or setters')
    seal(descriptor.value)
  }
  Object.freeze(value)
  sealedValues.add(value)
  return value
}

/** Whether `value` went through `seal` (or is a primitive): it can be shared rather than copied. */
export const isSealed = (value: unknown): boolean => !value || typeof value !== 'object' || sealedValues.has(value)

function copySealed<T>(value: T): T {
  return isSealed(value) ? value : seal(structuredClone(value))
}

/**
 * A deep, frozen copy of what will be sent (the signal is shared, not copied). Sealed messages (the session's
 * fold seals the history it derives) are shared, not cloned: only what is new since the last request is copied.
 */
export function frozenCopy(request: LlmRequest): LlmRequest {
  const { signal, messages, ...rest } = request
  let copy: Omit<LlmRequest, 'signal'>
  try {
    const list = Array.isArray(messages) ? messages.map(copySealed) : copySealed(messages)
    copy = { ...structuredClone(rest), messages: list }
  } catch (error) {
    throw violation(
      `the request holds a value that is not plain data (${error instanceof Error ? error.message : error})`,
      { cause: error },
    )
  }
  deepFreeze(copy)
  return Object.freeze({ ...copy, signal })
}

function deepFreeze(value: unknown): void {
  if (!value || typeof value !== 'object' || Object.isFrozen(value)) return
  Object.freeze(value)
  for (const item of Object.values(value)) deepFreeze(item)
}

/** A session-less request must leave as its caller made it: only `signal` may be another object. */
export function sameAsMade(asMade: LlmRequest, final: LlmRequest): string | undefined {
  const { signal: _a, ...made } = asMade
  const { signal: _b, ...sent } = final
  if (isDeepStrictEqual(made, sent)) return undefined
  const keys = new Set([...Object.keys(made), ...Object.keys(sent)])
  const changed = [...keys].filter((key) => !isDeepStrictEqual((made as any)[key], (sent as any)[key]))
  return `a session-less request was changed on its way (${changed.join(', ')})`
}

/**
 * What an encoder returned may differ from the checked messages only where an image reference was: by the
 * text substitute, or by the image inline whose bytes hash to the reference.
 */
export function findEncodingDrift(checked: readonly Message[], encoded: readonly Message[]): string | undefined {
  if (checked.length !== encoded.length)
    return `an encoder changed the number of messages (${checked.length} → ${encoded.length})`
  for (let i = 0; i < checked.length; i++) {
    const a = checked[i]!
    const b = encoded[i]!
    if (a === b) continue
    if (a.role !== b.role || a.content.length !== b.content.length || Object.keys(b).length !== 2)
      return `an encoder changed message ${i} beyond its images`
    for (let j = 0; j < a.content.length; j++) {
      const before = a.content[j]!
      const after = b.content[j]!
      if (before === after || isDeepStrictEqual(before, after)) continue
      if (before.type === 'tool-result' && after.type === 'tool-result') {
        const { content: c1, ...r1 } = before
        const { content: c2, ...r2 } = after
        if (!isDeepStrictEqual(r1, r2) || c1.length !== c2.length)
          return `an encoder changed tool result ${before.callId} beyond its images`
        for (let k = 0; k < c1.length; k++) {
          const problem = imageChange(c1[k]!, c2[k]!)
          if (problem) return `message ${i}, tool result ${before.callId}, block ${k}: ${problem}`
        }
        continue
      }
      const problem =
        before.type === 'image'
          ? imageChange(before, after as TextBlock | ImageBlock)
          : 'only image references may be encoded'
      if (problem) return `message ${i}, block ${j}: ${problem}`
    }
  }
  return undefined
}

function imageChange(before: TextBlock | ImageBlock, after: TextBlock | ImageBlock): string | undefined {
  if (before === after || isDeepStrictEqual(before, after)) return undefined
  if (before.type !== 'image' || !before.sha256) return 'only image references may be encoded'
  if (after.type === 'text') return undefined
  if (after.type !== 'image' || typeof after.data !== 'string')
    return 'an image reference became something other than its bytes or a text'
  const digest = createHash('sha256').update(Buffer.from(after.data, 'base64')).digest('hex')
  return digest === before.sha256 ? undefined : `the inline image does not hash to its reference ${before.sha256}`
}
