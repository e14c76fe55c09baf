import { createRoot } from 'react-dom/client'
import { App } from './components/App.tsx'
import { sessions } from './lib/sessions.ts'
import { stream } from './lib/stream.ts'
import './styles.css'

const root = createRoot(document.getElementById('root')!)
// The host serves this page only to a signed-in browser (its cookie), so there is nothing to check here.
stream.start()
sessions.start()
root.render(<App />)
