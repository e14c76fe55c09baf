/** A `!!js` value from a patch file: an expression evaluated in the row's context once its injections are ready. */
export class JsExpr {
  constructor(readonly source: string) {}
}

export function containsJs(value: unknown): boolean {
  if (value instanceof JsExpr) return true
  if (Array.isArray(value)) return value.some(containsJs)
  if (value && typeof value === 'object') return Object.values(value).some(containsJs)
  return false
}

/** Replaces every JsExpr with what `convert` returns for it (used to hand expressions to the loader host). */
export function mapJs(value: unknown, convert: (expr: JsExpr) => unknown): unknown {
  if (value instanceof JsExpr) return convert(value)
  if (Array.isArray(value)) return value.map((item) => mapJs(item, convert))
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapJs(v, convert)]))
  }
  return value
}
