import { useEffect, useState } from 'react'
import type { Methods } from '@dsh/web-protocol'
import { call } from './api.ts'

type Models = Methods['models.list']['result']
type Presets = Methods['presets.list']['result']
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

/** The mounted providers and their models (asked once per page load). */
export function useModels(): Models | undefined {
  const [value, setValue] = useState<Models>()
  useEffect(() => {
    models ??= call('models.list', {}).catch((error) => {
      models = undefined
      throw error
    })
    models.then(setValue, () => undefined)
  }, [])
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

/** After the default model changes in settings, the next read asks again. */
export function forgetModels(): void {
  models = undefined
}

export const PRESET_HINTS: Record<string, string> = {
  'read-only': 'Reads anything, writes nothing; asks before anything more.',
  'workspace-write': 'Writes inside the workspace only; asks before anything more.',
  'danger-full-access': 'No confinement: commands and edits may change anything you can.',
}

/** Why the route's model cannot take images, or undefined when it can (or nothing is known yet). */
export function imagesRefusedBy(models: Models | undefined, route: { provider: string; model: string } | undefined): string | undefined {
  if (!models || !route) return undefined
  const info = models.providers.find((provider) => provider.provider === route.provider)?.models.find((model) => model.id === route.model)
  return info && !info.images ? `${route.model} does not read images: pick a model that does to attach one` : undefined
}
