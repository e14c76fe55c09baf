import { KeyRound } from 'lucide-react'
import { useRoute } from '../lib/router.ts'
import { NewSession } from '../views/NewSession.tsx'
import { SessionPage } from '../views/SessionPage.tsx'
import { SettingsPage } from '../views/SettingsPage.tsx'
import { Sidebar } from './Sidebar.tsx'

export function App() {
  const route = useRoute()
  return (
    <div className="shell">
      <Sidebar route={route} />
      <main className="main">
        {route.page === 'session' ? <SessionPage key={route.id} id={route.id} /> : route.page === 'settings' ? <SettingsPage tab={route.tab} /> : <NewSession />}
      </main>
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
