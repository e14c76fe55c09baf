import { useSyncExternalStore } from 'react'

export type Route = { page: 'new' } | { page: 'session'; id: string } | { page: 'settings'; tab: string }

function parse(pathname: string): Route {
  const session = /^\/s\/([A-Za-z0-9_-]+)\/?$/.exec(pathname)
  if (session) return { page: 'session', id: session[1]! }
  const settings = /^\/settings(?:\/([a-z-]+))?\/?$/.exec(pathname)
  if (settings) return { page: 'settings', tab: settings[1] ?? 'models' }
  return { page: 'new' }
}

const listeners = new Set<() => void>()
let current = parse(location.pathname)

window.addEventListener('popstate', () => {
  current = parse(location.pathname)
  for (const listener of listeners) listener()
})

/** Client-side navigation (the host serves the app for every path without an extension). */
export function navigate(path: string): void {
  if (path === location.pathname) return
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
