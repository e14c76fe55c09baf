import { useEmitter } from '../lib/emitter.ts'
import { stream } from '../lib/stream.ts'

/**
 * Says when the tab has lost dsh: not answering (it retries by itself), or restarted so that this browser's
 * sign-in is gone. Signing in again is the user's act (the new link dsh printed); the tab notices it from
 * any tab of this browser and carries on where it was.
 */
export function ConnectionBanner() {
  useEmitter(stream.changed)
  if (stream.state === 'signed-out')
    return (
      <div className="conn-banner conn-banner-signed-out" role="alert">
        <strong>dsh was restarted: this tab is signed out.</strong> Open the new sign-in link dsh printed in its terminal (press Enter there for a fresh one), in this browser. This tab continues by
        itself once you are signed in.
        <button className="btn" onClick={() => stream.recheck()}>
          I signed in
        </button>
      </div>
    )
  if (stream.state === 'offline')
    return (
      <div className="conn-banner" role="status">
        dsh is not answering; reconnecting…
      </div>
    )
  return null
}
