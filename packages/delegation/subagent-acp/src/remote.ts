import { spawn, type ChildProcess } from 'node:child_process'
import { Readable, Writable } from 'node:stream'
import {
  client,
  ndJsonStream,
  type ClientContext,
  type NewSessionResponse,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionUpdate,
} from '@agentclientprotocol/sdk'

/** One ACP agent process and the session the child runs in. */
export interface RemoteAgent {
  agent: ClientContext
  sessionId: string
  /** Receives the session's updates (the running turn sets it). */
  onUpdate: ((update: SessionUpdate) => void) | undefined
  stderr(): string
  close(): Promise<void>
}

export interface RemoteOptions {
  command: string[]
  cwd: string
  env: Record<string, string>
  mode: string
  startTimeoutMs: number
  killGraceMs: number
  permission(request: RequestPermissionRequest): Promise<RequestPermissionResponse>
}

function ended(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once('exit', () => resolve()))
}

/**
 * Starts the agent process, initializes it, opens a session in `cwd` and puts it in `mode` (ACP modes are
 * dsh's permission presets, named like the sandbox modes). Any failure stops the process and throws, naming
 * the step and the agent's stderr.
 */
export async function startRemote(options: RemoteOptions): Promise<RemoteAgent> {
  const [program, ...args] = options.command
  if (!program) throw new Error('subagent-acp: `command` is empty')
  const child = spawn(program, args, { cwd: options.cwd, env: options.env, stdio: ['pipe', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr!.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4_000)))
  const failed = new Promise<never>((_, reject) => {
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`the ACP agent exited with ${code}`)))
  })
  failed.catch(() => undefined)
  const remote: RemoteAgent = {
    agent: undefined as unknown as ClientContext,
    sessionId: '',
    onUpdate: undefined,
    stderr: () => stderr,
    async close() {
      child.stdin!.end()
      const timer = setTimeout(() => child.kill('SIGKILL'), options.killGraceMs)
      await ended(child)
      clearTimeout(timer)
    },
  }
  const app = client({ name: 'dsh-subagent' })
    .onNotification(
      'session/update',
      ({ params }) => void (params.sessionId === remote.sessionId && remote.onUpdate?.(params.update)),
    )
    .onRequest('session/request_permission', async ({ params }) => options.permission(params))
  const connection = app.connect(
    ndJsonStream(
      Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>,
      Readable.toWeb(child.stdout!) as unknown as ReadableStream<Uint8Array>,
    ),
  )
  remote.agent = connection.agent
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>(
    (_, reject) =>
      (timer = setTimeout(
        () => reject(new Error(`no answer within ${options.startTimeoutMs} ms`)),
        options.startTimeoutMs,
      )),
  )
  try {
    const step = <T>(promise: Promise<T>) => Promise.race([promise, failed, deadline])
    await step(
      remote.agent.request('initialize', {
        protocolVersion: 1,
        clientCapabilities: {},
        clientInfo: { name: 'dsh-subagent', version: '0' },
      }),
    )
    remote.sessionId = (
      (await step(remote.agent.request('session/new', { cwd: options.cwd, mcpServers: [] }))) as NewSessionResponse
    ).sessionId
    await step(remote.agent.request('session/set_mode', { sessionId: remote.sessionId, modeId: options.mode }))
    return remote
  } catch (error) {
    await remote.close()
    throw new Error(
      `the ACP agent ${options.command.join(' ')} did not start a session in mode ${options.mode}: ${error instanceof Error ? error.message : error}${stderr ? `; its stderr: ${stderr.trim().slice(-500)}` : ''}`,
      { cause: error },
    )
  } finally {
    clearTimeout(timer)
  }
}
