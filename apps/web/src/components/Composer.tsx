import { useLayoutEffect, useRef, useState, type ReactNode } from 'react'
import { ArrowUp, CornerDownRight, ImagePlus, Square } from 'lucide-react'
import type { InlineImage, WebCommand } from '@dsh/web-protocol'
import { useHostInfo } from '../lib/catalog.ts'
import { CommandMenu, commandMatches } from './CommandMenu.tsx'
import { PendingImages, readImages } from './Images.tsx'

const MAX_HEIGHT_PX = 280

/**
 * The message box: Enter sends, Shift+Enter adds a line (and IME composition is left alone). While a
 * turn runs, sending steers it (the model reads the message at its next step) and Stop cancels it.
 */
export function Composer({
  running,
  busy,
  placeholder,
  onSend,
  onCancel,
  toolbar,
  autoFocus,
  imagesRefused,
  commands,
}: {
  running: boolean
  busy?: boolean
  placeholder?: string
  onSend: (text: string, mode: 'followup' | 'steer', images: InlineImage[]) => Promise<boolean>
  onCancel?: () => void
  toolbar?: ReactNode
  autoFocus?: boolean
  /** Why images cannot be attached right now (the model reads none), if they cannot. */
  imagesRefused?: string
  /** The slash commands the text completes to on `/` (the session's workspace's). */
  commands?: WebCommand[]
}) {
  const [text, setText] = useState('')
  const [active, setActive] = useState(0)
  // Esc hides the completion list until the text changes (then Esc passes on: it stops a running turn).
  const [dismissed, setDismissed] = useState(false)
  const matches = dismissed ? [] : commandMatches(text, commands)
  const pick = (command: WebCommand) => {
    setText(`/${command.name} `)
    setActive(0)
    area.current?.focus()
  }
  const [images, setImages] = useState<InlineImage[]>([])
  const area = useRef<HTMLTextAreaElement>(null)
  const picker = useRef<HTMLInputElement>(null)
  const canAttach = !!useHostInfo()?.attachments && !imagesRefused
  const attach = async (files: Iterable<File>) => {
    const read = await readImages(files)
    if (read.length) setImages((current) => [...current, ...read])
  }
  useLayoutEffect(() => {
    const element = area.current
    if (!element) return
    element.style.height = 'auto'
    element.style.height = `${Math.min(element.scrollHeight, MAX_HEIGHT_PX)}px`
  }, [text])

  const send = async () => {
    const message = text.trim()
    if ((!message && !images.length) || busy) return
    const attached = images
    setText('')
    setImages([])
    const ok = await onSend(message, running ? 'steer' : 'followup', attached)
    if (!ok) {
      setText(message)
      setImages(attached)
    }
    area.current?.focus()
  }

  return (
    <div
      className={`composer${running ? ' composer-running' : ''}`}
      onDragOver={(event) => canAttach && event.dataTransfer.types.includes('Files') && event.preventDefault()}
      onDrop={(event) => {
        if (!canAttach || !event.dataTransfer.files.length) return
        event.preventDefault()
        void attach(event.dataTransfer.files)
      }}
    >
      <CommandMenu matches={matches} active={Math.min(active, matches.length - 1)} onPick={pick} />
      <PendingImages
        images={images}
        onRemove={(index) => setImages((current) => current.filter((_, at) => at !== index))}
      />
      <textarea
        ref={area}
        rows={1}
        value={text}
        autoFocus={autoFocus}
        placeholder={
          placeholder ??
          (running
            ? 'Steer the running turn… (Enter to send)'
            : 'Ask dsh to do something… (Enter to send, Shift+Enter for a new line)')
        }
        aria-label="Message"
        data-esc={matches.length ? undefined : 'pass'}
        onChange={(event) => {
          setText(event.target.value)
          setDismissed(false)
          setActive(0)
        }}
        onPaste={(event) => {
          const files = [...event.clipboardData.files].filter((file) => file.type.startsWith('image/'))
          if (!canAttach || !files.length) return
          event.preventDefault()
          void attach(files)
        }}
        onKeyDown={(event) => {
          const highlighted = matches[Math.min(active, matches.length - 1)]
          if (highlighted && event.key === 'Escape') {
            event.preventDefault()
            setDismissed(true)
            return
          }
          if (highlighted && (event.key === 'ArrowDown' || event.key === 'ArrowUp')) {
            event.preventDefault()
            setActive((at) => (at + (event.key === 'ArrowDown' ? 1 : matches.length - 1)) % matches.length)
            return
          }
          // Tab, or Enter on a name not typed out yet, completes; Enter on a whole name sends it.
          if (
            highlighted &&
            (event.key === 'Tab' || (event.key === 'Enter' && text !== `/${highlighted.name}`)) &&
            !event.shiftKey
          ) {
            event.preventDefault()
            pick(highlighted)
            return
          }
          if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
            event.preventDefault()
            void send()
          }
        }}
      />
      <div className="composer-bar">
        <div className="composer-tools">
          {useHostInfo()?.attachments && imagesRefused && (
            <button className="icon-btn attach" disabled title={imagesRefused} aria-label="Attach images">
              <ImagePlus size={16} />
            </button>
          )}
          {canAttach && (
            <>
              <button
                className="icon-btn attach"
                onClick={() => picker.current?.click()}
                title="Attach images (or paste, or drop them here)"
                aria-label="Attach images"
              >
                <ImagePlus size={16} />
              </button>
              <input
                ref={picker}
                type="file"
                accept="image/*"
                multiple
                hidden
                onChange={(event) => {
                  if (event.target.files) void attach(event.target.files)
                  event.target.value = ''
                }}
              />
            </>
          )}
          {toolbar}
        </div>
        <div className="composer-actions">
          {running && onCancel && (
            <button className="btn btn-danger-soft" onClick={onCancel} title="Cancel the running turn">
              <Square size={13} fill="currentColor" /> Stop
            </button>
          )}
          <button
            className="btn btn-primary send"
            onClick={() => void send()}
            disabled={(!text.trim() && !images.length) || busy}
            aria-label={running ? 'Steer' : 'Send'}
            title={running ? 'Send as steering for the running turn' : 'Send'}
          >
            {running ? <CornerDownRight size={16} /> : <ArrowUp size={16} />}
            {running ? 'Steer' : 'Send'}
          </button>
        </div>
      </div>
    </div>
  )
}
