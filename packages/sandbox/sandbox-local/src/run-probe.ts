import { spawn } from 'node:child_process'

export interface ProbeRun {
  ok: boolean
  detail: string
}

/** Runs a backend's confined no-op, bounded by `timeoutMs`; `detail` is its stderr or why it failed. */
export function runProbe(argv: string[], timeoutMs: number): Promise<ProbeRun> {
  return new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), {
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: timeoutMs,
      killSignal: 'SIGKILL',
    })
    let stderr = ''
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk))
    child.on('error', (error) => resolve({ ok: false, detail: error.message }))
    child.on('close', (code, signal) => {
      if (code === 0) return resolve({ ok: true, detail: '' })
      const why = signal === 'SIGKILL' ? `did not finish within ${timeoutMs} ms` : `exited with ${signal ?? code}`
      resolve({ ok: false, detail: stderr.trim() ? `${why}: ${stderr.trim()}` : why })
    })
  })
}
