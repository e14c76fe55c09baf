// Attachments (docs/architecture.md, "Context").
import { type Context, Service } from '@dsh/cordis'
import type { ImageBlock } from '@dsh/llm'
import type { Session } from '@dsh/session'

export type AttachmentErrorCode =
  'ATTACHMENT_TOO_LARGE' | 'ATTACHMENT_UNSUPPORTED' | 'ATTACHMENT_INVALID' | 'ATTACHMENT_NOT_FOUND' | 'ATTACHMENT_IO'

export class AttachmentError extends Error {
  override name = 'AttachmentError'
  constructor(
    readonly code: AttachmentErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options)
  }
}

/** An image as it is stored: content-addressed, with what was learned normalizing it. */
export interface StoredImage {
  sha256: string
  mediaType: string
  bytes: number
  width: number
  height: number
}

/** A reference block as the log holds it: no inline data. */
export type ImageRef = ImageBlock & { sha256: string; data?: undefined }

declare module '@dsh/cordis' {
  interface Context {
    attachments: Attachments
  }
}

/**
 * Images kept by content hash beside a session's log and referenced from its events (docs/architecture.md, "Context"). Owns: the
 * bytes, their checks (type, size) and reading them back. Must not own: which routes may see images or
 * what a text-only model is told instead (the provider's request transform decides that).
 */
export abstract class Attachments extends Service {
  constructor(ctx: Context) {
    super(ctx, 'attachments')
  }

  /** Checks and stores image bytes for a session; returns the reference to log. Throws `AttachmentError`. */
  abstract store(
    session: Session,
    data: Uint8Array,
    declaredType?: string,
  ): Promise<{ ref: ImageRef; image: StoredImage }>
  /** The stored bytes of `sha256`; `ATTACHMENT_NOT_FOUND` when the session has no such image. */
  abstract load(session: Session, sha256: string): Promise<{ data: Uint8Array; image: StoredImage }>
}

export default Attachments
