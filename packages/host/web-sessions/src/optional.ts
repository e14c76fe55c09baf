import type { Context } from '@dsh/cordis'

/**
 * A service the plugin uses when it is mounted and does without otherwise (presets, the token meter,
 * attachments). Cordis injections are all required, so the optional ones are watched from a sub-scope
 * that is active exactly while the service exists.
 */
export function optionalService<K extends keyof Context & string>(ctx: Context, key: K): () => Context[K] | undefined {
  let value: Context[K] | undefined
  ctx.inject([key], (inner: Context) => {
    inner.effect(() => {
      value = inner[key]
      return () => void (value = undefined)
    }, `optional ${key}`)
  })
  return () => value
}
