import { useEffect, useState } from 'react'
import type { UsageReport } from '@dsh/web-protocol'
import { call, messageOf } from '../lib/api.ts'
import { navigate } from '../lib/router.ts'
import { costText } from '../lib/usage.ts'

const GROUPINGS = [
  { by: 'model', label: 'By model' },
  { by: 'workspace', label: 'By workspace' },
  { by: 'day', label: 'By day (UTC)' },
] as const
export type UsageGrouping = (typeof GROUPINGS)[number]['by']

/** Usage of every stored session (`usage.report`: the numbers of `dsh usage --json --all-workspaces`). */
export function UsagePage({ by }: { by: UsageGrouping }) {
  const [report, setReport] = useState<UsageReport>()
  const [error, setError] = useState<string>()
  useEffect(() => {
    setReport(undefined)
    call('usage.report', { by }).then(setReport, (failure) => setError(messageOf(failure)))
  }, [by])
  const rows = report ? [...report.groups, { key: 'Total', ...report.total }] : []
  return (
    <div className="settings-page">
      <header className="settings-header">
        <h2>Usage</h2>
        <nav className="tabs" role="tablist">
          {GROUPINGS.map((grouping) => (
            <button
              key={grouping.by}
              role="tab"
              aria-selected={by === grouping.by}
              className={`tab${by === grouping.by ? ' active' : ''}`}
              onClick={() => navigate(`/usage/${grouping.by}`)}
            >
              {grouping.label}
            </button>
          ))}
        </nav>
      </header>
      <div className="settings-body">
        <section className="card">
          {error && <p className="inline-error">{error}</p>}
          {report && (
            <p className="muted small">
              {report.sessions} session{report.sessions === 1 ? '' : 's'} in every workspace. Output includes reasoning
              tokens; the reasoning column shows them where the provider reports them. Prices: the{' '}
              <span className="mono">usage.prices</span> setting over the shipped table.
            </p>
          )}
          <table className="settings-table usage-table" data-testid="usage-table">
            <thead>
              <tr>
                <th>{GROUPINGS.find((grouping) => grouping.by === by)!.label.replace('By ', '')}</th>
                <th>requests</th>
                <th>input</th>
                <th>cached</th>
                <th>cache write</th>
                <th>output</th>
                <th title="The reasoning part of the output, where the provider reports it">reasoning</th>
                <th>cost</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.key} data-key={row.key}>
                  <td className="mono">{row.key}</td>
                  <td>{row.requests}</td>
                  <td>{row.input}</td>
                  <td>{row.cacheRead}</td>
                  <td>{row.cacheWrite}</td>
                  <td>{row.output}</td>
                  <td data-reasoning={row.reasoning ?? ''}>{row.reasoning ?? ''}</td>
                  <td data-cost={row.cost ?? ''}>{costText(row)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {report?.damaged.map((damaged) => (
            <p key={damaged.id} className="inline-error small">
              Session {damaged.id} is damaged and not counted: {damaged.reason}
            </p>
          ))}
        </section>
      </div>
    </div>
  )
}
