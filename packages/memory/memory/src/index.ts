// Memory across sessions (issue #33 item 4; docs/architecture.md, "Memory").
import { type Context, Service } from '@dsh/cordis'
import { oneOf, Type, type Static } from '@dsh/session'

/** `user`: the person's notes for every workspace; `workspace`: notes for one workspace (keyed by its real path). */
export const MEMORY_SCOPES = ['user', 'workspace'] as const
export type MemoryScope = (typeof MEMORY_SCOPES)[number]

/** One memory file as read: its entries in order (entry 1 is `entries[0]`) and its size. */
export interface MemoryFile {
  scope: MemoryScope
  /** Where it is stored (under `$DSH_HOME`, never in the repository). */
  path: string
  /** For `workspace`: the workspace's real path the file is keyed by. */
  workspace?: string
  entries: string[]
  /** Bytes the entries take in the file (the header a provider writes is not counted). */
  bytes: number
}

/** The caps a change is checked against (settings `memory.maxBytes`, `memory.maxEntryChars`). */
export interface MemoryLimits {
  maxBytes: number
  maxEntryChars: number
}

export type MemoryErrorCode = 'MEMORY_FULL' | 'MEMORY_ENTRY_TOO_LONG' | 'MEMORY_EMPTY_ENTRY' | 'MEMORY_NO_ENTRY'

/** A change the limits or the file refuse; `message` names the file and what to do. */
export class MemoryError extends Error {
  constructor(
    readonly code: MemoryErrorCode,
    message: string,
  ) {
    super(message)
    this.name = 'MemoryError'
  }
}

// Control characters (C0 with newline and tab, DEL, C1), zero-width and bidirectional formatting characters and
// line/paragraph separators: an entry is one line of plain text, so nothing in it can fake a new line, a tag
// boundary the person does not see, or a reordered sentence.
// eslint-disable-next-line no-control-regex -- removing control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]+/g

/** An entry as it is stored: unsafe characters become spaces, runs of white space one space, trimmed. */
export function sanitizeEntry(text: string): string {
  return text.replace(UNSAFE, ' ').replace(/\s+/g, ' ').trim()
}

/** The bytes one entry takes in a file (`- text\n`). */
export function entryBytes(entry: string): number {
  return Buffer.byteLength(`- ${entry}\n`)
}

const scope = oneOf(MEMORY_SCOPES)
const FileFacts = Type.Object({
  scope,
  path: Type.String(),
  workspace: Type.Optional(Type.String()),
  entries: Type.Array(Type.String()),
  bytes: Type.Integer({ minimum: 0 }),
  /** Entries left out because the file passes `memory.maxBytes` (a person wrote more by hand). */
  omitted: Type.Optional(Type.Integer({ minimum: 1 })),
})

/**
 * What a new session read from the memory files, logged at its start: the model reads `content` as a user
 * message (a `CONTEXT_KINDS` kind of @dsh/session), so a resumed session sees what it saw, never the file now.
 */
export const MemoryLoadedData = Type.Object({
  files: Type.Array(FileFacts),
  content: Type.Array(Type.Object({ type: Type.Literal('text'), text: Type.String() })),
})

/** The model proposed an entry (already sanitised: what a person is asked about and what would be stored). */
export const MemoryProposedData = Type.Object({
  callId: Type.String(),
  scope,
  text: Type.String(),
  path: Type.String(),
})

export const MEMORY_OUTCOMES = ['accepted', 'declined', 'refused'] as const
/** Who settled a proposal: a person or the approval service (`by` of `approval/decided`), or the `auto` setting. */
export const MemoryDecidedData = Type.Object({
  callId: Type.String(),
  outcome: oneOf(MEMORY_OUTCOMES),
  by: Type.String(),
  /** The text stored (a person may have edited it while approving). */
  text: Type.Optional(Type.String()),
  /** The entry's number in its file, when accepted. */
  entry: Type.Optional(Type.Integer({ minimum: 1 })),
  reason: Type.Optional(Type.String()),
})

export const MEMORY_CHANGES = ['added', 'edited', 'deleted'] as const
/** A person changed a memory file through `/memory` (logged in the session the command ran in). */
export const MemoryChangedData = Type.Object({
  scope,
  path: Type.String(),
  change: oneOf(MEMORY_CHANGES),
  entry: Type.Integer({ minimum: 1 }),
  text: Type.String(),
})

declare module '@dsh/session' {
  interface SessionEventMap {
    'memory/loaded': Static<typeof MemoryLoadedData>
    'memory/proposed': Static<typeof MemoryProposedData>
    'memory/decided': Static<typeof MemoryDecidedData>
    'memory/changed': Static<typeof MemoryChangedData>
  }
}

declare module '@dsh/cordis' {
  interface Context {
    memory: Memory
  }
}

/**
 * Memory files (definition). Owns: where the user's and each workspace's memory live, reading them, and
 * changing them one entry at a time within the limits given. Must not own: who may change them (the consumer
 * asks a person), what the model is told, or anything in the repository.
 */
export abstract class Memory extends Service {
  constructor(ctx: Context) {
    super(ctx, 'memory')
  }
  /** The file of `scope` for a session in `cwd` (an absent file has no entries). */
  abstract read(scope: MemoryScope, cwd: string): Promise<MemoryFile>
  /** Appends a sanitised entry; MEMORY_FULL when the file would pass `limits.maxBytes`. */
  abstract append(scope: MemoryScope, cwd: string, text: string, limits: MemoryLimits): Promise<MemoryFile>
  /** Replaces entry `entry` (1-based); MEMORY_NO_ENTRY when there is none. */
  abstract replace(
    scope: MemoryScope,
    cwd: string,
    entry: number,
    text: string,
    limits: MemoryLimits,
  ): Promise<MemoryFile>
  /** Removes entry `entry` (1-based); MEMORY_NO_ENTRY when there is none. */
  abstract remove(scope: MemoryScope, cwd: string, entry: number): Promise<MemoryFile>
}
