import { useEffect, useState } from 'react'
import { Boxes, KeyRound, Plug, SlidersHorizontal } from 'lucide-react'
import type { CredentialView, McpServerView, SettingView } from '@dsh/web-protocol'
import { Composition } from '../components/Composition.tsx'
import { ModelPicker } from '../components/Pickers.tsx'
import { call, messageOf } from '../lib/api.ts'
import { forgetModels, usePresets } from '../lib/catalog.ts'
import { navigate } from '../lib/router.ts'

const TABS = [
  { id: 'models', label: 'Models and keys', icon: KeyRound },
  { id: 'settings', label: 'All settings', icon: SlidersHorizontal },
  { id: 'mcp', label: 'MCP servers', icon: Plug },
  { id: 'composition', label: 'Composition', icon: Boxes },
] as const

export function SettingsPage({ tab }: { tab: string }) {
  return (
    <div className="settings-page">
      <header className="settings-header">
        <h2>Settings</h2>
        <nav className="tabs" role="tablist">
          {TABS.map(({ id, label, icon: Icon }) => (
            <button
              key={id}
              role="tab"
              aria-selected={tab === id}
              className={`tab${tab === id ? ' active' : ''}`}
              onClick={() => navigate(`/settings/${id}`)}
            >
              <Icon size={14} /> {label}
            </button>
          ))}
        </nav>
      </header>
      <div className="settings-body">
        {tab === 'settings' ? (
          <AllSettings />
        ) : tab === 'mcp' ? (
          <McpServers />
        ) : tab === 'composition' ? (
          <Composition />
        ) : (
          <ModelsAndKeys />
        )}
      </div>
    </div>
  )
}

const SOURCES: Record<string, string> = {
  env: 'from the environment',
  'home-file': 'saved in dsh',
  dotenv: 'from the workspace .env',
  missing: 'not set',
}

/** A key is write-only: the page shows whether it is set and where from, and can replace or remove it. */
function CredentialRow({
  credential,
  onChange,
}: {
  credential: CredentialView
  onChange: (next: CredentialView) => void
}) {
  const [value, setValue] = useState('')
  const [error, setError] = useState<string>()
  const [busy, setBusy] = useState(false)
  const run = async (work: () => Promise<{ credential: CredentialView }>) => {
    setBusy(true)
    setError(undefined)
    try {
      onChange((await work()).credential)
      setValue('')
      forgetModels() // pickers say "(no key)" from models.list: ask again now that a key changed
    } catch (failure) {
      setError(messageOf(failure))
    } finally {
      setBusy(false)
    }
  }
  return (
    <div className="credential" data-testid={`credential-${credential.name}`}>
      <div className="credential-head">
        <strong>{credential.provider ?? credential.name}</strong>
        <code className="muted">{credential.name}</code>
        <span className={`badge ${credential.set ? 'badge-ok' : 'badge-warn'}`}>
          {credential.set ? `set · ${SOURCES[credential.source]}` : 'not set'}
        </span>
      </div>
      <form
        className="credential-form"
        onSubmit={(event) => {
          event.preventDefault()
          if (value.trim()) void run(() => call('credentials.set', { name: credential.name, value }))
        }}
      >
        <input
          type="password"
          autoComplete="off"
          placeholder={credential.set ? 'Replace the key…' : 'Paste the API key…'}
          value={value}
          onChange={(event) => setValue(event.target.value)}
          aria-label={`${credential.name} value`}
        />
        <button className="btn btn-primary" disabled={busy || !value.trim()}>
          Save
        </button>
        {credential.source === 'home-file' && (
          <button
            type="button"
            className="btn"
            disabled={busy}
            onClick={() => void run(() => call('credentials.remove', { name: credential.name }))}
          >
            Remove
          </button>
        )}
      </form>
      {credential.source === 'env' && (
        <p className="muted small">The environment variable wins over a saved key while dsh runs with it.</p>
      )}
      {!credential.set && <p className="muted small">{credential.howToSet}</p>}
      {error && <p className="inline-error">{error}</p>}
    </div>
  )
}

function ModelsAndKeys() {
  const [credentials, setCredentials] = useState<CredentialView[]>()
  const [settings, setSettings] = useState<SettingView[]>()
  const [error, setError] = useState<string>()
  const [saved, setSaved] = useState<string>()
  const presets = usePresets()
  useEffect(() => {
    call('credentials.list', {}).then(
      (result) => setCredentials(result.credentials),
      (failure) => setError(messageOf(failure)),
    )
    call('settings.list', {}).then(
      (result) => setSettings(result.settings),
      (failure) => setError(messageOf(failure)),
    )
  }, [])
  const get = (key: string) => settings?.find((setting) => setting.key === key)
  const provider = get('model.provider')
  const model = get('model.name')
  const preset = get('web.defaultPreset')

  const save = async (entries: [string, unknown][]) => {
    setError(undefined)
    try {
      for (const [key, value] of entries) await call('settings.set', { key, value })
      setSettings((await call('settings.list', {})).settings)
      forgetModels()
      setSaved('Saved')
      setTimeout(() => setSaved(undefined), 1500)
    } catch (failure) {
      setError(messageOf(failure))
    }
  }

  return (
    <div className="settings-sections">
      <section className="card">
        <h3>Defaults for new sessions</h3>
        {error && <p className="inline-error">{error}</p>}
        <div className="field">
          <span className="label">Model</span>
          {provider && model ? (
            <ModelPicker
              route={
                provider.value && model.value
                  ? { provider: String(provider.value), model: String(model.value) }
                  : undefined
              }
              onChange={(route) =>
                void save([
                  ['model.provider', route.provider],
                  ['model.name', route.model],
                ])
              }
            />
          ) : (
            <span className="muted small">No routes plugin defines a default-model setting in this profile.</span>
          )}
        </div>
        {preset && (
          <div className="field">
            <span className="label">Permission preset</span>
            <select
              className="select"
              value={String(preset.value)}
              onChange={(event) => void save([['web.defaultPreset', event.target.value]])}
              aria-label="Default permission preset"
            >
              <option value="">{presets?.defaultPreset ? `Default (${presets.defaultPreset})` : 'Default'}</option>
              {presets?.presets.map((name) => (
                <option key={name} value={name}>
                  {name}
                </option>
              ))}
            </select>
          </div>
        )}
        {saved && <span className="badge badge-ok">{saved}</span>}
      </section>
      <section className="card">
        <h3>Provider keys</h3>
        <p className="muted small">
          Keys are write-only here: dsh says whether one is set, never what it is. Saved keys go to your dsh home with
          owner-only permissions.
        </p>
        {!credentials && !error && <p className="muted">Loading…</p>}
        {credentials?.map((credential) => (
          <CredentialRow
            key={credential.name}
            credential={credential}
            onChange={(next) =>
              setCredentials((list) => list?.map((entry) => (entry.name === next.name ? next : entry)))
            }
          />
        ))}
      </section>
    </div>
  )
}

function SettingEditor({ setting, onSaved }: { setting: SettingView; onSaved: (next: SettingView) => void }) {
  const [draft, setDraft] = useState(typeof setting.value === 'string' ? setting.value : JSON.stringify(setting.value))
  const [error, setError] = useState<string>()
  const run = async (work: () => Promise<{ setting: SettingView }>) => {
    setError(undefined)
    try {
      const next = (await work()).setting
      onSaved(next)
      setDraft(typeof next.value === 'string' ? next.value : JSON.stringify(next.value))
    } catch (failure) {
      setError(messageOf(failure))
    }
  }
  const parse = () => {
    if (typeof setting.default === 'string') return draft
    try {
      return JSON.parse(draft)
    } catch {
      return draft
    }
  }
  return (
    <tr data-testid={`setting-${setting.key}`}>
      <td>
        <code>{setting.key}</code>
        <div className="muted small">{setting.description}</div>
        {error && <div className="inline-error small">{error}</div>}
      </td>
      <td>
        {typeof setting.default === 'boolean' ? (
          <input
            type="checkbox"
            checked={setting.value === true}
            onChange={(event) =>
              void run(() => call('settings.set', { key: setting.key, value: event.target.checked }))
            }
            aria-label={setting.key}
          />
        ) : (
          <form
            className="inline-form"
            onSubmit={(event) => {
              event.preventDefault()
              void run(() => call('settings.set', { key: setting.key, value: parse() }))
            }}
          >
            <input
              className="mono"
              value={draft}
              placeholder="(empty)"
              onChange={(event) => setDraft(event.target.value)}
              aria-label={setting.key}
            />
          </form>
        )}
      </td>
      <td>
        <span className={`badge${setting.source === 'default' ? '' : ' badge-ok'}`} title={setting.origin}>
          {setting.source}
        </span>
      </td>
      <td>
        {setting.source !== 'default' && (
          <button className="link-btn" onClick={() => void run(() => call('settings.reset', { key: setting.key }))}>
            Reset
          </button>
        )}
      </td>
    </tr>
  )
}

function AllSettings() {
  const [settings, setSettings] = useState<SettingView[]>()
  const [error, setError] = useState<string>()
  useEffect(() => {
    call('settings.list', {}).then(
      (result) => setSettings(result.settings),
      (failure) => setError(messageOf(failure)),
    )
  }, [])
  return (
    <section className="card">
      <h3>Every setting the mounted plugins define</h3>
      <p className="muted small">Stored in settings.yaml in your dsh home. Press Enter to save a value.</p>
      {error && <p className="inline-error">{error}</p>}
      <table className="settings-table">
        <tbody>
          {settings?.map((setting) => (
            <SettingEditor
              key={setting.key}
              setting={setting}
              onSaved={(next) => setSettings((list) => list?.map((entry) => (entry.key === next.key ? next : entry)))}
            />
          ))}
        </tbody>
      </table>
    </section>
  )
}

/** The MCP servers of the directory dsh web started in: where each comes from, and its tools once a session ran it. */
function McpServers() {
  const [servers, setServers] = useState<McpServerView[]>()
  const [error, setError] = useState<string>()
  useEffect(() => {
    call('mcp.servers', {}).then(
      (result) => setServers(result.servers),
      (failure) => setError(messageOf(failure)),
    )
  }, [])
  return (
    <section className="card">
      <h3>MCP servers</h3>
      <p className="muted small">
        From $DSH_HOME/mcp.yaml and the workspace .mcp.json (dsh mcp add | remove | test). A workspace server starts
        only once you approve it.
      </p>
      {error && <p className="inline-error">{error}</p>}
      {servers && !servers.length && <p className="muted">No MCP servers are configured here.</p>}
      <table className="settings-table mcp-servers">
        <tbody>
          {servers?.map((server) => (
            <tr key={server.name} data-server={server.name}>
              <td>
                <strong>{server.name}</strong>
                <div className="muted small">
                  {server.origin} · {server.transport} · trust {server.trust} · {server.source}
                </div>
              </td>
              <td>
                {server.state}
                {server.message && <div className="muted small">{server.message}</div>}
              </td>
              <td className="small">
                {server.tools.length ? (
                  server.tools.map((tool) => tool.name).join(', ')
                ) : (
                  <span className="muted">tools listed once a session starts it</span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  )
}
