import { AlertOctagon, Settings } from 'lucide-react'
import { adviceFor } from '../lib/fold.ts'
import { navigate } from '../lib/router.ts'

/** Codes whose remedy is on the settings page: the callout links there instead of only naming it. */
const FIXED_IN_SETTINGS = new Set(['AUTH', 'CREDENTIAL_MISSING'])

/** An error with its code, its message and what to do about it. */
export function ErrorCallout({ error, testId }: { error: { code: string; message: string }; testId?: string }) {
  const advice = adviceFor(error.code)
  return (
    <div className="callout callout-error" data-testid={testId}>
      <AlertOctagon size={15} />
      <div>
        <strong>{error.code}</strong> {error.message}
        {advice && <p className="advice">{advice}</p>}
        {FIXED_IN_SETTINGS.has(error.code) && (
          <button className="btn callout-action" onClick={() => navigate('/settings/models')}>
            <Settings size={14} /> Open Models and keys
          </button>
        )}
      </div>
    </div>
  )
}
