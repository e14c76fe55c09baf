import { mkdtempSync, readdirSync, readFileSync, existsSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startMockServer, type MockServer } from '@dsh/llm-mock-server'
import { appDir, WITHOUT_AUTO_TITLE } from '@dsh/test-harness'
import { drive, type TerminalDriver } from '@dsh/terminal-driver'

/** The launcher as a user runs it (the bundle `npm run setup` builds, else dist). */
export const dshBin = join(appDir, 'bin/dsh.js')

export interface World {
  home: string
  repo: string
  llm: MockServer
  env: Record<string, string>
  patchArgs: string[]
  /** `dsh <args>` in a real pseudo-terminal, its screen read through @xterm/headless. */
  open(
    args: string[],
    options?: { cols?: number; rows?: number; env?: Record<string, string>; tuiConfig?: string },
  ): TerminalDriver
  dispose(): Promise<void>
}

export async function makeWorld(): Promise<World> {
  const home = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-tui-home-')))
  const repo = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-tui-repo-')))
  const llm = await startMockServer()
  writeFileSync(join(home, 'extra.patch.yml'), WITHOUT_AUTO_TITLE)
  const patchArgs = ['--patch', join(home, 'extra.patch.yml')]
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    DSH_HOME: home,
    TERM: 'xterm-256color',
    DEEPSEEK_BASE_URL: llm.url,
    DEEPSEEK_API_KEY: 'test-key-for-the-mock-server',
  }
  const drivers: TerminalDriver[] = []
  return {
    home,
    repo,
    llm,
    env,
    patchArgs,
    open(args, options = {}) {
      const [first, ...rest] = args
      const patches = [...patchArgs]
      if (options.tuiConfig) {
        // The `tui` row's config for this launch only (the headless runs of a test have no such row).
        const file = join(home, `tui-${drivers.length}.patch.yml`)
        writeFileSync(file, `- id: tui\n  config: ${options.tuiConfig}\n`)
        patches.push('--patch', file)
      }
      // A profile word must come first; the patches after it.
      const argv = first === 'tui' || first === 'resume' ? [first, ...patches, ...rest] : [...patches, ...args]
      const driver = drive(process.execPath, [dshBin, ...argv], {
        cwd: repo,
        env: { ...env, ...options.env },
        cols: options.cols ?? 100,
        rows: options.rows ?? 30,
      })
      drivers.push(driver)
      return driver
    },
    async dispose() {
      for (const driver of drivers) await driver.dispose()
      await llm.close()
      rmSync(home, { recursive: true, force: true })
      rmSync(repo, { recursive: true, force: true })
    },
  }
}

/** The stored events of every session of the world, by session id (read from the JSONL files). */
export function storedSessions(world: World): Map<string, { type: string; data: any }[]> {
  const out = new Map<string, { type: string; data: any }[]>()
  const root = join(world.home, 'sessions')
  if (!existsSync(root)) return out
  for (const key of readdirSync(root))
    for (const id of readdirSync(join(root, key))) {
      const file = join(root, key, id, 'session.jsonl')
      if (!existsSync(file)) continue
      const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean).slice(1)
      out.set(
        id,
        lines.map((line) => JSON.parse(line)),
      )
    }
  return out
}
