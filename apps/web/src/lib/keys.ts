import { useEffect, useRef } from 'react'

/**
 * Esc, for the whole tab. In order: a field that gives Esc its own meaning keeps it (the rule field puts its
 * suggestion back, a rename field cancels the rename); else the topmost open dialog, palette or panel closes
 * (the last opened first); else the page's own use of it runs (an approval waiting: reject it; a turn
 * running: cancel it). The message box and the palette's search are fields that pass Esc on
 * (`data-esc="pass"`).
 */
export function ownsEscape(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false
  if (target.dataset.esc === 'pass') return false
  return (
    target.isContentEditable ||
    target.tagName === 'INPUT' ||
    target.tagName === 'TEXTAREA' ||
    target.tagName === 'SELECT'
  )
}

const closers: { close: () => void }[] = []

/** Whether a dialog, palette or panel is open that Esc would close first. */
export const dialogOpen = (): boolean => closers.length > 0

/** While `open`, Esc calls `close` (unless a dialog opened after it is still open). */
export function useEscapeCloses(open: boolean, close: () => void): void {
  const latest = useRef(close)
  latest.current = close
  useEffect(() => {
    if (!open) return
    const entry = { close: () => latest.current() }
    closers.push(entry)
    return () => {
      const at = closers.indexOf(entry)
      if (at >= 0) closers.splice(at, 1)
    }
  }, [open])
}

/**
 * Installed once by the app, in the capture phase so it runs before the page's own Esc listeners: closing a
 * dialog marks the event handled (`defaultPrevented`), which they honour.
 */
export function installEscape(): () => void {
  const onKey = (event: KeyboardEvent) => {
    if (event.key !== 'Escape' || event.defaultPrevented || !closers.length || ownsEscape(event.target)) return
    event.preventDefault()
    closers.at(-1)!.close()
  }
  window.addEventListener('keydown', onKey, true)
  return () => window.removeEventListener('keydown', onKey, true)
}
