import type { Tone } from './lines.ts'

const COLORS: Record<Tone, string> = {
  user: 'cyan',
  muted: 'gray',
  ok: 'green',
  error: 'red',
  warn: 'yellow',
  tool: 'blue',
  add: 'green',
  del: 'red',
  accent: 'magenta',
}

/** Colours by tone, or none at all when `NO_COLOR` is set (https://no-color.org: any non-empty value). */
export interface Theme {
  color(tone: Tone | undefined): string | undefined
  /** Dim text is an attribute, not a colour: it stays under NO_COLOR. */
  dim(tone: Tone | undefined): boolean
}

export function themeFor(env: NodeJS.ProcessEnv): Theme {
  const noColor = !!env.NO_COLOR
  return {
    color: (tone) => (noColor || !tone ? undefined : COLORS[tone]),
    dim: (tone) => noColor && tone === 'muted',
  }
}
