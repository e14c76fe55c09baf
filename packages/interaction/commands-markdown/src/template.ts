import { parse } from 'yaml'

/** A command file's front matter fields dsh reads, and its body (the prompt template). */
export interface CommandFile {
  description?: string
  argumentHint?: string
  model?: string
  template: string
}

const FENCE = /^---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/

/** Parses a command file; throws naming the field at fault. Front matter is optional. */
export function parseCommandFile(text: string): CommandFile {
  const source = text.startsWith('\uFEFF') ? text.slice(1) : text
  const match = FENCE.exec(source)
  if (!match) return { template: source.trim() }
  const data: unknown = parse(match[1]!) ?? {}
  if (typeof data !== 'object' || Array.isArray(data)) throw new Error('front matter: must be a mapping of fields')
  const fields = data as Record<string, unknown>
  const text_ = (key: string) => {
    const value = fields[key]
    if (value !== undefined && typeof value !== 'string') throw new Error(`${key}: must be a string`)
    return value as string | undefined
  }
  const [description, argumentHint, model] = [text_('description'), text_('argument-hint'), text_('model')]
  return {
    ...(description ? { description } : {}),
    ...(argumentHint ? { argumentHint } : {}),
    ...(model ? { model } : {}),
    template: source.slice(match[0].length).trim(),
  }
}

/** The arguments as words; a quoted part ("two words" or 'two words') is one. */
export function splitArguments(args: string): string[] {
  return [...args.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((match) => match[1] ?? match[2] ?? match[3]!)
}

/**
 * The prompt: `$ARGUMENTS` becomes the whole argument text, `$1`…`$9` the words. A template with no
 * placeholder gets the arguments appended (`ARGUMENTS: …`) so they are not lost. Nothing is executed:
 * Claude Code's `!`command`` lines and `@file` references stay text.
 */
export function expandTemplate(template: string, args: string): string {
  const words = splitArguments(args)
  if (!/\$(ARGUMENTS|[1-9])/.test(template)) return args ? `${template}\n\nARGUMENTS: ${args}` : template
  return template.replace(/\$ARGUMENTS|\$([1-9])/g, (whole, digit: string | undefined) =>
    digit ? (words[Number(digit) - 1] ?? '') : args,
  )
}
