import { spawn } from 'node:child_process'

/** Whether this process runs in an SSH session: a browser would open on the far machine, not the user's. */
export function overSsh(env: NodeJS.ProcessEnv): boolean {
  return !!(env.SSH_CONNECTION || env.SSH_TTY)
}

/** The platform's "open this URL" command. */
export function defaultBrowserCommand(platform: NodeJS.Platform): string[] {
  if (platform === 'darwin') return ['open']
  if (platform === 'win32') return ['cmd', '/c', 'start', '""']
  return ['xdg-open']
}

/**
 * Opens `url` in the user's browser, detached, without waiting. A missing opener is not an error: the
 * URL is printed anyway; `onError` hears why it failed.
 */
export function openBrowser(command: string[], url: string, onError: (error: Error) => void): void {
  const [file, ...args] = command
  if (!file) return
  try {
    const child = spawn(file, [...args, url], { detached: true, stdio: 'ignore' })
    child.on('error', onError)
    child.unref()
  } catch (error) {
    onError(error as Error)
  }
}
