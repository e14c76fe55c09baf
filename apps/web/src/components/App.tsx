import { useEffect, useState } from 'react'
import { KeyRound, Menu, Plus } from 'lucide-react'
import { navigate, useRoute } from '../lib/router.ts'
import { NewSession } from '../views/NewSession.tsx'
import { SessionPage } from '../views/SessionPage.tsx'
import { SettingsPage } from '../views/SettingsPage.tsx'
import { Sidebar } from './Sidebar.tsx'

export function App() {
  const route = useRoute()
  // On a narrow window the sidebar is a drawer: opened from the top bar, closed by any navigation.
  const [menuOpen, setMenuOpen] = useState(false)
  useEffect(() => setMenuOpen(false), [route])
  return (
    <div className={`shell${menuOpen ? ' menu-open' : ''}`}>
      <Sidebar route={route} />
      {menuOpen && <div className="scrim" onClick={() => setMenuOpen(false)} aria-hidden />}
      <div className="main-column">
        <header className="mobile-bar">
          <button className="icon-btn" onClick={() => setMenuOpen(true)} aria-label="Show sessions and settings" aria-expanded={menuOpen}>
            <Menu size={18} />
          </button>
          <span className="brand-name">dsh</span>
          <button className="icon-btn mobile-new" onClick={() => navigate('/')} aria-label="New session">
            <Plus size={18} />
          </button>
        </header>
        <main className="main">
          {route.page === 'session' ? <SessionPage key={route.id} id={route.id} atSeq={route.seq} /> : route.page === 'settings' ? <SettingsPage tab={route.tab} /> : <NewSession />}
        </main>
      </div>
    </div>
  )
}

/** Opened without the launch token (typed the address, or a new window): say where the link is. */
export function NoToken() {
  return (
    <div className="empty-state full">
      <KeyRound size={28} />
      <h1>Open dsh from its link</h1>
      <p>
        For your safety this page needs the link <code>dsh web</code> printed in your terminal (it carries a one-time key for this launch). Copy it from
        the terminal, or restart <code>dsh web</code>.
      </p>
    </div>
  )
}
