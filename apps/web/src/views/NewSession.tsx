import { useState } from 'react'
import { FolderOpen, Sparkles } from 'lucide-react'
import type { InlineImage, SessionListItem, WireRoute } from '@dsh/web-protocol'
import { Composer } from '../components/Composer.tsx'
import { FolderPicker } from '../components/FolderPicker.tsx'
import { AgentPresetPicker, ModelPicker, PlanModeToggle, PresetPicker } from '../components/Pickers.tsx'
import { call, messageOf } from '../lib/api.ts'
import { imagesRefusedBy, useModels } from '../lib/catalog.ts'
import { useEmitter } from '../lib/emitter.ts'
import { navigate } from '../lib/router.ts'
import { sessions } from '../lib/sessions.ts'

/** Starts a session: pick the workspace folder, the model, the permission and agent presets and plan mode, then write the first message. */
export function NewSession() {
  useEmitter(sessions.changed)
  const [cwd, setCwd] = useState<string>()
  const [picking, setPicking] = useState(false)
  const [route, setRoute] = useState<WireRoute>()
  const [preset, setPreset] = useState<string>()
  const [agentPreset, setAgentPreset] = useState<string>()
  const [planMode, setPlanMode] = useState(false)
  const [error, setError] = useState<string>()
  const [busy, setBusy] = useState(false)
  const models = useModels()
  const workspace = cwd ?? sessions.launchCwd

  const start = async (text: string, images: InlineImage[]) => {
    setBusy(true)
    setError(undefined)
    try {
      // Enter pressed before the host has said where dsh web was started: wait for the list, do not drop it.
      if (!workspace) await sessions.refresh()
      const folder = cwd ?? sessions.launchCwd
      if (!folder) throw new Error(sessions.error ?? 'dsh web has not said which folder it was started in')
      const { sessionId } = await call('sessions.create', {
        cwd: folder,
        ...(route ? { route } : {}),
        ...(preset ? { preset } : {}),
        ...(agentPreset ? { agentPreset } : {}),
        ...(planMode ? { planMode } : {}),
      })
      await call('agent.send', { sessionId, text, images })
      navigate(`/s/${sessionId}`)
      return true
    } catch (failure) {
      setError(messageOf(failure))
      return false
    } finally {
      setBusy(false)
    }
  }

  return (
    <div className="new-session-page">
      <div className="new-session-card">
        <div className="hero">
          <Sparkles size={22} />
          <h1>What should dsh work on?</h1>
          <p className="muted">
            It reads, edits and runs commands in the folder you choose, within the permissions you set. Every step is
            logged.
          </p>
        </div>
        <div className="workspace-row">
          <span className="label">Workspace</span>
          <button
            className="workspace-button mono"
            onClick={() => setPicking(!picking)}
            title="Choose another folder"
            data-testid="workspace"
          >
            <FolderOpen size={15} /> {workspace || '…'}
          </button>
        </div>
        {picking && (
          <FolderPicker
            start={workspace || undefined}
            recent={recentWorkspaces(sessions.items)}
            onCancel={() => setPicking(false)}
            onPick={(path) => {
              setCwd(path)
              setPicking(false)
            }}
          />
        )}
        {error && <div className="callout callout-error">{error}</div>}
        <Composer
          running={false}
          busy={busy}
          autoFocus
          onSend={(text, _mode, images) => start(text, images)}
          imagesRefused={imagesRefusedBy(models, route ?? models?.defaultRoute)}
          toolbar={
            <>
              <ModelPicker route={route} onChange={setRoute} />
              <PresetPicker preset={preset} onChange={setPreset} />
              <AgentPresetPicker agentPreset={agentPreset} onChange={setAgentPreset} />
              <PlanModeToggle active={planMode} onChange={setPlanMode} />
            </>
          }
        />
      </div>
    </div>
  )
}

/** The workspaces of the newest sessions, each once, at most five. */
function recentWorkspaces(items: SessionListItem[]): string[] {
  const byRecency = [...items].sort((a, b) => b.updatedAt - a.updatedAt)
  return [...new Set(byRecency.map((item) => item.cwd))].slice(0, 5)
}
