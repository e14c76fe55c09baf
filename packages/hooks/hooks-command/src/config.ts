import { statSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { relative } from 'node:path'
import { HOOK_EVENTS, type HookCommand, type HookEventName, type HookOrigin } from '@dsh/hooks'

/** A hooks file to read: absent files are fine, unreadable or malformed ones are problems. */
export interface HookFile {
  path: string
  origin: HookOrigin
}

export interface LoadedHooks {
  commands: HookCommand[]
  /** Each names the file and the field: `<file>: hooks.PreToolUse[0].hooks[1].command must be a string`. */
  problems: string[]
  /** Claude Code events dsh does not fire (Notification, SessionEnd, …): ignored, named so a user can tell. */
  ignored: string[]
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** Reads one file's `hooks` object (Claude Code's settings.json shape; other keys of the file are not ours). */
function parseFile(file: HookFile, text: string, into: LoadedHooks): void {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    into.problems.push(`${file.path}: not valid JSON (${(error as Error).message})`)
    return
  }
  if (!isObject(json)) return void into.problems.push(`${file.path}: the file must hold a JSON object`)
  if (json.hooks === undefined) return
  if (!isObject(json.hooks)) return void into.problems.push(`${file.path}: hooks must be an object of event names`)
  for (const [event, groups] of Object.entries(json.hooks)) {
    if (!HOOK_EVENTS.includes(event as HookEventName)) {
      into.ignored.push(`${file.path}: hooks.${event} (dsh does not fire ${event})`)
      continue
    }
    if (!Array.isArray(groups)) {
      into.problems.push(`${file.path}: hooks.${event} must be an array of { matcher, hooks }`)
      continue
    }
    groups.forEach((group, index) => parseGroup(file, event as HookEventName, group, `hooks.${event}[${index}]`, into))
  }
}

function parseGroup(file: HookFile, event: HookEventName, group: unknown, where: string, into: LoadedHooks): void {
  const problem = (text: string) => into.problems.push(`${file.path}: ${where}${text}`)
  if (!isObject(group)) return void problem(' must be an object { matcher, hooks }')
  if (group.matcher !== undefined && typeof group.matcher !== 'string') return void problem('.matcher must be a string')
  if (typeof group.matcher === 'string' && !validRegex(group.matcher))
    return void problem(`.matcher "${group.matcher}" is not a valid regular expression`)
  if (!Array.isArray(group.hooks)) return void problem('.hooks must be an array of { type: "command", command }')
  group.hooks.forEach((hook, index) => {
    const at = `.hooks[${index}]`
    if (!isObject(hook)) return void problem(`${at} must be an object`)
    if (hook.type !== 'command')
      return void into.ignored.push(
        `${file.path}: ${where}${at} (type ${JSON.stringify(hook.type)}: dsh runs only "command" hooks)`,
      )
    if (typeof hook.command !== 'string' || !hook.command.trim())
      return void problem(`${at}.command must be a non-empty string`)
    if (hook.timeout !== undefined && (typeof hook.timeout !== 'number' || !(hook.timeout > 0)))
      return void problem(`${at}.timeout must be a positive number of seconds`)
    into.commands.push({
      event,
      ...(typeof group.matcher === 'string' ? { matcher: group.matcher } : {}),
      command: hook.command,
      ...(typeof hook.timeout === 'number' ? { timeout: hook.timeout } : {}),
      file: file.path,
      origin: file.origin,
    })
  })
}

function validRegex(source: string): boolean {
  try {
    return RegExp(source) instanceof RegExp
  } catch {
    return false
  }
}

/** Reads the hooks files in order (user first, then the workspace's); a missing file holds no hooks. */
/** Whether nothing is at `path` (any other failure is left to the read, which reports it). */
function absent(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false }) === undefined
  } catch {
    return false
  }
}

export async function loadHooks(files: HookFile[]): Promise<LoadedHooks> {
  const loaded: LoadedHooks = { commands: [], problems: [], ignored: [] }
  for (const file of files) {
    // Most hook files do not exist, and this runs twice per tool call: a synchronous look first costs
    // microseconds where an asynchronous failed read waits its turn in the thread pool (docs/performance.md).
    if (absent(file.path)) continue
    let text: string
    try {
      text = await readFile(file.path, 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
        loaded.problems.push(`${file.path}: cannot be read (${(error as Error).message})`)
      continue
    }
    parseFile(file, text, loaded)
  }
  return loaded
}

/**
 * The digest a workspace approval is bound to: every workspace hook's file (relative to the workspace), event,
 * matcher, command and timeout. Any change to what would run changes it, so it is asked about again.
 */
export function workspaceDigest(commands: HookCommand[], cwd: string): string {
  const described = commands
    .filter((hook) => hook.origin === 'workspace')
    .map((hook) => [relative(cwd, hook.file), hook.event, hook.matcher ?? '', hook.command, hook.timeout ?? null])
  return `sha256:${createHash('sha256').update(JSON.stringify(described)).digest('hex')}`
}

/** Whether a hook's matcher covers one of `names` (Claude Code: absent, empty and `*` match everything; else an anchored regex). */
export function matches(hook: HookCommand, names: string[] | undefined): boolean {
  if (!names || hook.matcher === undefined || hook.matcher === '' || hook.matcher === '*') return true
  const pattern = new RegExp(`^(?:${hook.matcher})$`)
  return names.some((name) => pattern.test(name))
}
