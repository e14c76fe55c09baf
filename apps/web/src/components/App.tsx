import { useEffect, useState } from 'react'
import { Menu, Plus } from 'lucide-react'
import { installEscape, useEscapeCloses } from '../lib/keys.ts'
import { navigate, useRoute } from '../lib/router.ts'
import { NewSession } from '../views/NewSession.tsx'
import { SessionPage } from '../views/SessionPage.tsx'
import { SettingsPage } from '../views/SettingsPage.tsx'
import { UsagePage } from '../views/UsagePage.tsx'
import { ConnectionBanner } from './ConnectionBanner.tsx'
import { Palette } from './Palette.tsx'
import { Sidebar } from './Sidebar.tsx'

export function App() {
  const route = useRoute()
  // On a narrow window the sidebar is a drawer: opened from the top bar, closed by any navigation.
  const [menuOpen, setMenuOpen] = useState(false)
  useEffect(() => setMenuOpen(false), [route])
  useEffect(installEscape, [])
  useEscapeCloses(menuOpen, () => setMenuOpen(false))
  // Ctrl+K (Cmd+K on a Mac) opens the command palette from anywhere, a field included; again, it closes it.
  const [palette, setPalette] = useState(false)
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (!(event.ctrlKey || event.metaKey) || event.altKey || event.shiftKey || event.key.toLowerCase() !== 'k') return
      event.preventDefault()
      setPalette((open) => !open)
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  }, [])
  return (
    <div className={`shell${menuOpen ? ' menu-open' : ''}`}>
      <Sidebar route={route} />
      {menuOpen && <div className="scrim" onClick={() => setMenuOpen(false)} aria-hidden />}
      <div className="main-column">
        <header className="mobile-bar">
          <button
            className="icon-btn"
            onClick={() => setMenuOpen(true)}
            aria-label="Show sessions and settings"
            aria-expanded={menuOpen}
          >
            <Menu size={18} />
          </button>
          <span className="brand-name">dsh</span>
          <button className="icon-btn mobile-new" onClick={() => navigate('/')} aria-label="New session">
            <Plus size={18} />
          </button>
        </header>
        <ConnectionBanner />
        {palette && <Palette onClose={() => setPalette(false)} />}
        <main className="main">
          {route.page === 'session' ? (
            <SessionPage key={route.id} id={route.id} atSeq={route.seq} />
          ) : route.page === 'settings' ? (
            <SettingsPage tab={route.tab} />
          ) : route.page === 'usage' ? (
            <UsagePage by={route.by} />
          ) : (
            <NewSession />
          )}
        </main>
      </div>
    </div>
  )
}
