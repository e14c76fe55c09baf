import { createRoot } from 'react-dom/client'
import { App, NoToken } from './components/App.tsx'
import { captureToken } from './lib/api.ts'
import { sessions } from './lib/sessions.ts'
import { stream } from './lib/stream.ts'
import './styles.css'

const root = createRoot(document.getElementById('root')!)
if (captureToken()) {
  stream.start()
  sessions.start()
  root.render(<App />)
} else {
  root.render(<NoToken />)
}
