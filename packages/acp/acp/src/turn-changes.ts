// The files a prompt's turn changed, told to the editor once the turn ends (docs/architecture.md, "Review and
// rewind"): a notice where the client presents them, else a short message chunk. Nothing when the
// session-changes row is not mounted or the turn changed no file.
import type { SessionUpdate } from '@agentclientprotocol/sdk'
import type { Agent } from '@dsh/agent'
import type { Context } from '@dsh/cordis'
import type { SessionChangesService } from '@dsh/session-changes'

const MARK = { added: 'A', deleted: 'D', modified: 'M', unrecorded: '?' } as const

export async function turnChangesSummary(ctx: Context, agent: Agent, notices: boolean): Promise<SessionUpdate[]> {
  const service = ctx.get('sessionChanges') as SessionChangesService | undefined
  const turns = agent.session.events.filter((event) => event.type === 'turn/start').length
  if (!service || !turns) return []
  const { files } = await service.changes(agent.session.id, { fromTurn: turns })
  if (!files.length) return []
  const lines = files.map(
    (file) => `${MARK[file.status]} ${file.path}${file.patch ? ` (+${file.added} −${file.removed})` : ''}`,
  )
  const title = `This turn changed ${files.length} file${files.length === 1 ? '' : 's'}`
  if (notices) return [{ sessionUpdate: 'notice', severity: 'info', title, description: lines.join('\n') }]
  return [
    {
      sessionUpdate: 'agent_message_chunk',
      content: { type: 'text', text: `\n\n${title}:\n${lines.map((line) => `- ${line}`).join('\n')}\n` },
    },
  ]
}
