import { Boxes, ClipboardList, Cpu, Gauge, KeyRound, Shield, ShieldAlert, ShieldCheck } from 'lucide-react'
import type { WirePressure, WireRoute } from '@dsh/web-protocol'
import { notReadyReason, PRESET_HINTS, useAgentPresets, useModels, usePresets } from '../lib/catalog.ts'
import { compact } from '../lib/format.ts'
import { navigate, useRoute } from '../lib/router.ts'

const routeKey = (route: WireRoute) => `${route.provider}/${route.model}`

const KEYS_PAGE = '/settings/models'

/**
 * The model of a session (or of a new one): every mounted provider's catalogue, and effort where offered.
 * Models of a provider without a key say "(no key)" and stay pickable (the key may be added next); once
 * one is picked, a link leads to the keys.
 */
export function ModelPicker({
  route,
  onChange,
  disabled,
}: {
  route?: WireRoute
  onChange: (route: WireRoute) => void
  disabled?: boolean
}) {
  const models = useModels()
  const current = route ?? models?.defaultRoute
  const providers = models?.providers ?? []
  const known = providers.some((provider) =>
    provider.models.some((model) => current && provider.provider === current.provider && model.id === current.model),
  )
  const info = providers
    .find((provider) => provider.provider === current?.provider)
    ?.models.find((model) => model.id === current?.model)
  const noKey = notReadyReason(models, current?.provider)
  const page = useRoute()
  const onKeysPage = page.page === 'settings' && page.tab === 'models'
  return (
    <span className="chip-group">
      <label className="chip" title="Model">
        <Cpu size={13} />
        <select
          aria-label="Model"
          disabled={disabled || !models}
          value={current ? routeKey(current) : ''}
          onChange={(event) => {
            const [provider, ...rest] = event.target.value.split('/')
            onChange({ provider: provider!, model: rest.join('/') })
          }}
        >
          {current && !known && <option value={routeKey(current)}>{routeKey(current)}</option>}
          {providers.map((provider) => (
            <optgroup
              key={provider.provider}
              label={provider.ready ? provider.provider : `${provider.provider} (no key)`}
            >
              {provider.models.map((model) => (
                <option key={model.id} value={`${provider.provider}/${model.id}`} title={provider.notReady?.message}>
                  {provider.ready ? model.id : `${model.id} (no key)`}
                </option>
              ))}
            </optgroup>
          ))}
        </select>
      </label>
      {info?.efforts?.length ? (
        <label className="chip" title="Reasoning effort">
          <select
            aria-label="Reasoning effort"
            disabled={disabled}
            value={current?.effort ?? ''}
            onChange={(event) =>
              current &&
              onChange({
                provider: current.provider,
                model: current.model,
                ...(event.target.value ? { effort: event.target.value } : {}),
              })
            }
          >
            <option value="">default effort</option>
            {info.efforts.map((effort) => (
              <option key={effort} value={effort}>
                {effort} effort
              </option>
            ))}
          </select>
        </label>
      ) : null}
      {noKey && !onKeysPage && (
        <a
          className="chip chip-warn"
          href={KEYS_PAGE}
          title={noKey}
          aria-label={`Add a key for ${current?.provider}`}
          data-testid="model-no-key"
          onClick={(event) => {
            event.preventDefault()
            navigate(KEYS_PAGE)
          }}
        >
          <KeyRound size={13} /> Add a key
        </a>
      )}
    </span>
  )
}

/** The permission preset: what the agent may do without asking. */
export function PresetPicker({
  preset,
  onChange,
  disabled,
}: {
  preset?: string
  onChange: (preset: string) => void
  disabled?: boolean
}) {
  const presets = usePresets()
  if (!presets?.presets.length) return null
  const value = preset ?? presets.defaultPreset ?? ''
  const Icon = value === 'danger-full-access' ? ShieldAlert : value === 'read-only' ? ShieldCheck : Shield
  return (
    <label
      className={`chip${value === 'danger-full-access' ? ' chip-danger' : ''}`}
      title={PRESET_HINTS[value] ?? 'Permission preset'}
    >
      <Icon size={13} />
      <select
        aria-label="Permission preset"
        disabled={disabled}
        value={value}
        onChange={(event) => onChange(event.target.value)}
      >
        {presets.presets.map((name) => (
          <option key={name} value={name} title={PRESET_HINTS[name]}>
            {name}
          </option>
        ))}
      </select>
    </label>
  )
}

/**
 * The agent preset of a new session (which tools it is offered: standard, explore, minimal, the user's
 * `$DSH_HOME/presets/*.yaml`); not the permission preset. Fixed once the session exists.
 */
export function AgentPresetPicker({
  agentPreset,
  onChange,
}: {
  agentPreset?: string
  onChange: (name: string) => void
}) {
  const presets = useAgentPresets()
  if (!presets?.length) return null
  const value = agentPreset ?? 'standard'
  return (
    <label className="chip" title={presets.find((preset) => preset.name === value)?.description ?? 'Agent preset'}>
      <Boxes size={13} />
      <select aria-label="Agent preset" value={value} onChange={(event) => onChange(event.target.value)}>
        {presets.map((preset) => (
          <option key={preset.name} value={preset.name} title={preset.description}>
            {preset.name}
          </option>
        ))}
      </select>
    </label>
  )
}

/** Plan mode on or off: while on, only reading runs until the user approves the agent's plan. */
export function PlanModeToggle({
  active,
  onChange,
  disabled,
}: {
  active: boolean
  onChange: (active: boolean) => void
  disabled?: boolean
}) {
  return (
    <button
      type="button"
      className={`chip${active ? ' chip-active' : ''}`}
      aria-pressed={active}
      disabled={disabled}
      title={
        active
          ? 'Plan mode: only reading runs until you approve the plan. Click to leave it.'
          : 'Plan mode: the agent reads and plans, and changes nothing until you approve its plan.'
      }
      onClick={() => onChange(!active)}
    >
      <ClipboardList size={13} /> Plan
    </button>
  )
}

/** Context pressure: how much of the model's window the next request fills. */
export function ContextMeter({ pressure }: { pressure?: WirePressure }) {
  if (!pressure || !pressure.window) return null
  const percent = Math.min(100, Math.round(pressure.ratio * 100))
  const tone = percent >= 85 ? 'danger' : percent >= 60 ? 'warn' : 'ok'
  return (
    <span
      className={`meter meter-${tone}`}
      title={`${pressure.tokens.toLocaleString()} of ${pressure.window.toLocaleString()} tokens in context (${pressure.source === 'usage' ? 'counted by the provider' : 'estimated'})`}
      data-testid="context-meter"
    >
      <Gauge size={13} />
      <span className="meter-bar">
        <span style={{ width: `${Math.max(2, percent)}%` }} />
      </span>
      {compact(pressure.tokens)} / {compact(pressure.window)}
    </span>
  )
}
