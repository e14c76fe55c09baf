import { useEffect, useState } from 'react'
import { Coins } from 'lucide-react'
import type { UsageSums } from '@dsh/web-protocol'
import { call } from '../lib/api.ts'
import { usageLine } from '../lib/usage.ts'

/**
 * The session header's usage: asked of the host (`usage.session`, the same fold as `dsh usage`) when the
 * session opens and again each time `revision` changes (a request was answered).
 */
export function SessionUsage({ sessionId, revision }: { sessionId: string; revision: unknown }) {
  const [usage, setUsage] = useState<UsageSums & { turn?: UsageSums }>()
  useEffect(() => {
    let current = true
    call('usage.session', { sessionId }).then(
      (result) => current && setUsage(result),
      () => current && setUsage(undefined),
    )
    return () => {
      current = false
    }
  }, [sessionId, revision])
  if (!usage || usage.requests === 0) return null
  const { text, title } = usageLine(usage)
  return (
    <span className="badge" data-testid="session-usage" title={title}>
      <Coins size={11} /> {text}
    </span>
  )
}
