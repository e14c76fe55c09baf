import { useEffect, useState } from 'react'
import type { Methods } from '@dsh/web-protocol'
import { call } from './api.ts'

type Models = Methods['models.list']['result']
type Presets = Methods['presets.list']['result']
type AgentPresets = Methods['agentPresets.list']['result']['agentPresets']
type Info = Methods['host.info']['result']

let models: Promise<Models> | undefined
let presets: Promise<Presets> | undefined
let info: Promise<Info> | undefined

/** What this launch offers (attachments…), asked once per page load. */
export function useHostInfo(): Info | undefined {
  const [value, setValue] = useState<Info>()
  useEffect(() => {
    info ??= call('host.info', {}).catch((error) => {
      info = undefined
      throw error
    })
    info.then(setValue, () => undefined)
  }, [])
  return value
}

const modelsListeners = new Set<() => void>()

/**
 * The mounted providers, their models and whether each has a key: asked once per page load, and again
 * after `forgetModels()` (a key or the default model changed), which every mounted picker follows.
 */
export function useModels(): Models | undefined {
  const [value, setValue] = useState<Models>()
  const [asked, setAsked] = useState(0)
  useEffect(() => {
    const again = () => setAsked((count) => count + 1)
    modelsListeners.add(again)
    return () => void modelsListeners.delete(again)
  }, [])
  useEffect(() => {
    let current = true
    models ??= call('models.list', {}).catch((error) => {
      models = undefined
      throw error
    })
    models.then(
      (result) => current && setValue(result),
      () => undefined,
    )
    return () => void (current = false)
  }, [asked])
  return value
}

export function usePresets(): Presets | undefined {
  const [value, setValue] = useState<Presets>()
  useEffect(() => {
    presets ??= call('presets.list', {}).catch((error) => {
      presets = undefined
      throw error
    })
    presets.then(setValue, () => undefined)
  }, [])
  return value
}

let agentPresets: Promise<AgentPresets> | undefined

/** The agent presets a new session may start with (built-ins and the user's files), asked once per page load. */
export function useAgentPresets(): AgentPresets | undefined {
  const [value, setValue] = useState<AgentPresets>()
  useEffect(() => {
    agentPresets ??= call('agentPresets.list', {}).then(
      (result) => result.agentPresets,
      (error) => {
        agentPresets = undefined
        throw error
      },
    )
    agentPresets.then(setValue, () => undefined)
  }, [])
  return value
}

/** After the default model or a key changes in settings, ask again (pickers on the page update). */
export function forgetModels(): void {
  models = undefined
  for (const listener of modelsListeners) listener()
}

/** Why a provider cannot be used yet (no key), or undefined when it is ready or unknown. */
export function notReadyReason(models: Models | undefined, provider: string | undefined): string | undefined {
  const entry = models?.providers.find((candidate) => candidate.provider === provider)
  return entry && !entry.ready ? (entry.notReady?.message ?? `${provider} is not ready`) : undefined
}

export const PRESET_HINTS: Record<string, string> = {
  'read-only': 'Reads anything, writes nothing; asks before anything more.',
  'workspace-write': 'Writes inside the workspace only; asks before anything more.',
  'danger-full-access': 'No confinement: commands and edits may change anything you can.',
}

/** Why the route's model cannot take images, or undefined when it can (or nothing is known yet). */
export function imagesRefusedBy(
  models: Models | undefined,
  route: { provider: string; model: string } | undefined,
): string | undefined {
  if (!models || !route) return undefined
  const info = models.providers
    .find((provider) => provider.provider === route.provider)
    ?.models.find((model) => model.id === route.model)
  return info && !info.images ? `${route.model} does not read images: pick a model that does to attach one` : undefined
}
