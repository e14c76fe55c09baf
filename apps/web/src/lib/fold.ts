import type { WireEvent } from '@dsh/web-protocol'
import { SessionView } from '@dsh/session-view'

// The conversation is folded by @dsh/session-view, the display fold every surface shares (docs/architecture.md,
// "Surfaces: one display fold"); this module names its shapes for the app's components.
export type { ApprovalInfo, ErrorInfo, ImageRef, Item, ToolItem, Usage } from '@dsh/session-view'

/** The folded conversation: items, the open turn, the last route, preset, window and usage, pending approvals. */
export type Folded = SessionView

/** Folds loaded events (contiguous by seq, perhaps starting mid-log) at once; live events are then applied one by one. */
export function fold(events: readonly WireEvent[]): Folded {
  return SessionView.fold(events)
}

/** What to do about a failure, in the user's words. */
export function adviceFor(code: string | undefined): string | undefined {
  switch (code) {
    case 'AUTH':
      return 'The provider refused the API key. Check it in Settings → Models and keys.'
    case 'CREDENTIAL_MISSING':
      return 'No API key is set for this provider. Add one in Settings → Models and keys, then send again.'
    case 'QUOTA':
      return 'The provider account is out of credit. Top it up, or switch to another model.'
    case 'RATE_LIMIT':
      return 'The provider is rate limiting. Wait a moment and send again, or switch model.'
    case 'CONTEXT_WINDOW_EXCEEDED':
      return "The conversation no longer fits the model's context window. Fork from an earlier turn, or switch to a model with a larger window."
    case 'SERVER':
    case 'TIMEOUT':
    case 'TRANSPORT':
      return 'The provider did not answer properly. Check your connection and send again.'
    case 'UNKNOWN_PROVIDER':
      return 'No adapter for this provider is mounted. Pick another model.'
    case 'INVALID_REQUEST':
      return 'The provider rejected the request. Switching model or forking from an earlier turn may help.'
    case 'SESSION_LOCKED':
      return 'Another dsh process holds this session. Close it there, or fork to continue here.'
    default:
      return undefined
  }
}
