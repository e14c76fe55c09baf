import { useEmitter } from '../lib/emitter.ts'
import { stream } from '../lib/stream.ts'

/**
 * Says when the tab has lost dsh: not answering (it retries by itself), or this browser's sign-in is gone
 * (it expired, it was signed out, or dsh web now runs with another DSH_HOME; a restart keeps it). Signing in again is the user's act (the new link dsh printed); the tab notices it from
 * any tab of this browser and carries on where it was.
 */
export function ConnectionBanner() {
  useEmitter(stream.changed)
  if (stream.state === 'signed-out')
    return (
      <div className="conn-banner conn-banner-signed-out" role="alert">
        <strong>This tab is signed out.</strong> Run <code>dsh web</code> again (or press Enter in the terminal where it
        runs) and open the sign-in link it prints, in this browser. This tab continues by itself once you are signed in.
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
