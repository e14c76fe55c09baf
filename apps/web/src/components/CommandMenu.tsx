import type { WebCommand } from '@dsh/web-protocol'

/** The commands a composer text completes to: while it is `/` and the start of a name (no space yet). */
export function commandMatches(text: string, commands: readonly WebCommand[] | undefined): WebCommand[] {
  const match = /^\/([a-z0-9_-]*)$/.exec(text)
  if (!match || !commands) return []
  return commands.filter((command) => command.name.startsWith(match[1]!))
}

/** The completion list above the message box: click (or Tab / Enter on the highlighted one) completes. */
export function CommandMenu({
  matches,
  active,
  onPick,
}: {
  matches: WebCommand[]
  active: number
  onPick: (command: WebCommand) => void
}) {
  if (!matches.length) return null
  return (
    <ul className="command-menu" role="listbox" aria-label="Commands">
      {matches.map((command, index) => (
        <li
          key={command.name}
          role="option"
          aria-selected={index === active}
          className={index === active ? 'active' : undefined}
          onMouseDown={(event) => {
            event.preventDefault() // keep the focus in the message box
            onPick(command)
          }}
          title={command.origin === 'dsh' ? undefined : command.origin}
        >
          <span className="command-name">/{command.name}</span>
          {command.argumentHint && <span className="command-hint">{command.argumentHint}</span>}
          <span className="command-description">{command.description}</span>
        </li>
      ))}
    </ul>
  )
}
