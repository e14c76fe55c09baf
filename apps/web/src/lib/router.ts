import { useSyncExternalStore } from 'react'

/** `seq` (from `?seq=`): the event a search hit names, to open the session at. */
export type Route =
  | { page: 'new' }
  | { page: 'session'; id: string; seq?: number }
  | { page: 'settings'; tab: string }
  | { page: 'usage'; by: 'model' | 'workspace' | 'day' }

function parse(path: string): Route {
  const { pathname, searchParams } = new URL(path, location.origin)
  const session = /^\/s\/([A-Za-z0-9_-]+)\/?$/.exec(pathname)
  const seq = searchParams.get('seq')
  if (session)
    return { page: 'session', id: session[1]!, ...(seq !== null && /^\d+$/.test(seq) ? { seq: Number(seq) } : {}) }
  const settings = /^\/settings(?:\/([a-z-]+))?\/?$/.exec(pathname)
  if (settings) return { page: 'settings', tab: settings[1] ?? 'models' }
  const usage = /^\/usage(?:\/(model|workspace|day))?\/?$/.exec(pathname)
  if (usage) return { page: 'usage', by: (usage[1] ?? 'model') as 'model' | 'workspace' | 'day' }
  return { page: 'new' }
}

const listeners = new Set<() => void>()
let current = parse(location.pathname + location.search)

window.addEventListener('popstate', () => {
  current = parse(location.pathname + location.search)
  for (const listener of listeners) listener()
})

/** Client-side navigation (the host serves the app for every path without an extension). */
export function navigate(path: string): void {
  if (path === location.pathname + location.search) return
  history.pushState(null, '', path)
  current = parse(path)
  for (const listener of listeners) listener()
}

export function useRoute(): Route {
  return useSyncExternalStore(
    (listener) => {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    () => current,
  )
}
