import { render, type RenderOptions } from 'ink'
import type { LaunchStdio } from '@dsh/app'
import { App } from './app.tsx'
import type { Config } from './config.ts'
import type { TuiController } from './controller.ts'
import { themeFor } from './theme.ts'

/** Draws the app in the launch's terminal; returns what takes it down (the terminal is restored). */
export function startInk(
  controller: TuiController,
  config: Pick<Config, 'completionRows' | 'maxFps'>,
  stdio: LaunchStdio,
  options: { env?: NodeJS.ProcessEnv; onRender?: RenderOptions['onRender'] } = {},
): () => void {
  const instance = render(
    <App controller={controller} theme={themeFor(options.env ?? process.env)} completionRows={config.completionRows} />,
    {
      stdout: stdio.stdout as NodeJS.WriteStream,
      stdin: stdio.stdin as NodeJS.ReadStream,
      stderr: stdio.stderr as NodeJS.WriteStream,
      exitOnCtrlC: false,
      patchConsole: false,
      maxFps: config.maxFps,
      ...(options.onRender ? { onRender: options.onRender } : {}),
    },
  )
  return () => {
    instance.unmount()
    instance.cleanup()
    ;(stdio.stdin as NodeJS.ReadStream).pause?.()
  }
}
