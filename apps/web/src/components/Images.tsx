import { useEffect, useState } from 'react'
import { ImageOff, X } from 'lucide-react'
import type { InlineImage } from '@dsh/web-protocol'
import { call } from '../lib/api.ts'
import { useEscapeCloses } from '../lib/keys.ts'
import type { ImageRef } from '../lib/fold.ts'

const loaded = new Map<string, Promise<string>>()

/** The image of a logged reference, read once per page load from the session's attachments. */
function useImageUrl(sessionId: string, image: ImageRef): { url?: string; failed?: string } {
  const [state, setState] = useState<{ url?: string; failed?: string }>(
    image.data ? { url: `data:${image.mediaType};base64,${image.data}` } : {},
  )
  useEffect(() => {
    if (image.data || !image.sha256) return
    const key = `${sessionId}/${image.sha256}`
    let promise = loaded.get(key)
    if (!promise) {
      promise = call('attachments.get', { sessionId, sha256: image.sha256 }).then(
        (result) => `data:${result.mediaType};base64,${result.data}`,
      )
      loaded.set(key, promise)
      promise.catch(() => loaded.delete(key))
    }
    let live = true
    promise.then(
      (url) => live && setState({ url }),
      (error: Error) => live && setState({ failed: error.message }),
    )
    return () => void (live = false)
  }, [sessionId, image.sha256, image.data, image.mediaType])
  return state
}

function Thumb({ sessionId, image, onOpen }: { sessionId: string; image: ImageRef; onOpen: (url: string) => void }) {
  const { url, failed } = useImageUrl(sessionId, image)
  if (failed)
    return (
      <span className="thumb thumb-missing" title={failed}>
        <ImageOff size={16} />
      </span>
    )
  if (!url) return <span className="thumb thumb-loading" />
  return (
    <button className="thumb" onClick={() => onOpen(url)} aria-label="Open image">
      <img src={url} alt="attached" />
    </button>
  )
}

/** The images of a user message, as thumbnails that open full size. */
export function MessageImages({ sessionId, images }: { sessionId: string; images: ImageRef[] }) {
  const [open, setOpen] = useState<string>()
  useEscapeCloses(open !== undefined, () => setOpen(undefined))
  return (
    <div className="thumbs">
      {images.map((image, index) => (
        <Thumb key={image.sha256 ?? index} sessionId={sessionId} image={image} onOpen={setOpen} />
      ))}
      {open && (
        <div className="lightbox" onClick={() => setOpen(undefined)} role="dialog" aria-label="Image">
          <img src={open} alt="attached, full size" />
        </div>
      )}
    </div>
  )
}

/** Images waiting in the composer, each removable before sending. */
export function PendingImages({ images, onRemove }: { images: InlineImage[]; onRemove: (index: number) => void }) {
  if (!images.length) return null
  return (
    <div className="thumbs pending" data-testid="pending-images">
      {images.map((image, index) => (
        <span key={index} className="thumb">
          <img src={`data:${image.mediaType};base64,${image.data}`} alt="to attach" />
          <button className="thumb-remove" onClick={() => onRemove(index)} aria-label="Remove image">
            <X size={12} />
          </button>
        </span>
      ))}
    </div>
  )
}

/** Reads image files (picked, pasted or dropped) as base64 for the API. */
export async function readImages(files: Iterable<File>): Promise<InlineImage[]> {
  const out: InlineImage[] = []
  for (const file of files) {
    if (!file.type.startsWith('image/')) continue
    const bytes = new Uint8Array(await file.arrayBuffer())
    let binary = ''
    for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
    out.push({ mediaType: file.type, data: btoa(binary) })
  }
  return out
}
