/** The text that replaces a secret value: names the credential, never shows it. */
export const redactionMarker = (name: string) => `«redacted:${name}»`

/**
 * Replaces every occurrence of each secret value in `text` with its marker. Longer values go first so a
 * secret that contains another is replaced whole. Empty values are skipped (they would match everywhere).
 */
export function redactSecrets(text: string, secrets: Iterable<readonly [value: string, name: string]>): string {
  const ordered = [...secrets].filter(([value]) => value.length > 0).sort((a, b) => b[0].length - a[0].length)
  let out = text
  for (const [value, name] of ordered) {
    if (out.includes(value)) out = out.split(value).join(redactionMarker(name))
  }
  return out
}
