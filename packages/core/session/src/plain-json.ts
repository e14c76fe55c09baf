/**
 * Session data must be plain JSON so that what is stored is exactly what was appended. Returns the path of
 * the first offending value with what is wrong, or undefined when the value is plain.
 */
export function findNonPlain(value: unknown, path = 'data', seen = new Set<object>()): string | undefined {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return undefined
    case 'number':
      return Number.isFinite(value) ? undefined : `${path} is ${value} (not a finite number)`
    case 'undefined':
      return `${path} is undefined`
    case 'object': {
      if (value === null) return undefined
      if (seen.has(value)) return `${path} is a cycle`
      const proto = Object.getPrototypeOf(value)
      if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) {
        return `${path} is a ${value.constructor?.name ?? 'class'} instance (only plain objects and arrays)`
      }
      seen.add(value)
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          const problem = findNonPlain(value[i], `${path}[${i}]`, seen)
          if (problem) return problem
        }
      } else {
        if (Object.getOwnPropertySymbols(value).length) return `${path} has symbol keys`
        for (const [key, item] of Object.entries(value)) {
          const problem = findNonPlain(item, `${path}.${key}`, seen)
          if (problem) return problem
        }
      }
      seen.delete(value)
      return undefined
    }
    default:
      return `${path} is a ${typeof value}`
  }
}

export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const item of Object.values(value)) deepFreeze(item)
  }
  return value
}
