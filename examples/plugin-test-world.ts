// What the plugin tests share (examples/*/test, apps/cli/src/plugins.test.ts): a throwaway DSH_HOME and
// workspace, the mock model provider, `npm pack` of a plugin folder into a temp folder, and `dsh` run in the
// test's worker (the launcher's run(), with this world's environment).
import { spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startMockServer, type MockServer } from '../packages/test-support/llm-mock-server/src/index.ts'
import { dshInProcess } from '../packages/test-support/harness/src/launch.ts'

export const repoDir = join(dirname(fileURLToPath(import.meta.url)), '..')

export interface PluginWorld {
  root: string
  home: string
  workspace: string
  llm: MockServer
  /** `npm pack` of `dir` into a temp folder of this world; the tarball's path. */
  pack(dir: string): string
  /** A plugin folder written from `files` (package.json included), packed; the tarball's path. */
  packFiles(name: string, files: Record<string, string>): string
  dsh(args: string[], options?: { cwd?: string }): Promise<{ code: number | null; stdout: string; stderr: string }>
  close(): Promise<void>
}

export async function pluginWorld(): Promise<PluginWorld> {
  const root = mkdtempSync(join(tmpdir(), 'dsh-plugins-'))
  const home = join(root, 'home')
  const workspace = join(root, 'workspace')
  const packs = join(root, 'packs')
  for (const dir of [home, workspace, packs]) mkdirSync(dir, { recursive: true })
  const llm = await startMockServer()
  // npm itself must not reach anything: the tarball is installed offline, its cache is this world's.
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    DSH_HOME: home,
    DEEPSEEK_BASE_URL: llm.url,
    DEEPSEEK_API_KEY: 'test-key-0123456789',
    npm_config_offline: 'true',
    npm_config_cache: join(root, 'npm-cache'),
    npm_config_update_notifier: 'false',
  }
  const pack = (dir: string) => {
    const result = spawnSync('npm', ['pack', dir, '--pack-destination', packs, '--ignore-scripts', '--json'], {
      cwd: packs,
      env,
      encoding: 'utf8',
    })
    if (result.status !== 0) throw new Error(`npm pack ${dir} failed: ${result.stderr}`)
    return join(packs, JSON.parse(result.stdout)[0].filename)
  }
  return {
    root,
    home,
    workspace,
    llm,
    pack,
    packFiles(name, files) {
      const dir = join(root, 'sources', name)
      for (const [file, text] of Object.entries(files)) {
        mkdirSync(dirname(join(dir, file)), { recursive: true })
        writeFileSync(join(dir, file), text)
      }
      return pack(dir)
    },
    // In this worker, as every test that is not about the process itself runs dsh (docs/architecture.md,
    // "Tests"): the commands and the sessions are the subject here, not the process boundary.
    dsh(args, options = {}) {
      return dshInProcess(args, { env, cwd: options.cwd ?? workspace })
    },
    async close() {
      await llm.close()
      rmSync(root, { recursive: true, force: true })
    },
  }
}

/** A copy of an example plugin folder without anything a test run left in it. */
export function copyExample(world: PluginWorld, name: string): string {
  const target = join(world.root, 'sources', name)
  cpSync(join(repoDir, 'examples', name), target, {
    recursive: true,
    filter: (source) => !source.includes('node_modules'),
  })
  return target
}

/** The tool names the model was offered in request `index`. */
export function offeredTools(llm: MockServer, index: number): string[] {
  const body = llm.requests[index]?.body as { tools?: { function?: { name?: string }; name?: string }[] }
  return (body?.tools ?? []).map((tool) => tool.function?.name ?? tool.name ?? '')
}

/** The text of the tool results the model was sent in request `index`. */
export function toolResults(llm: MockServer, index: number): string[] {
  const body = llm.requests[index]?.body as { messages?: { role: string; content: unknown }[] }
  return (body?.messages ?? [])
    .filter((message) => message.role === 'tool')
    .map((message) => (typeof message.content === 'string' ? message.content : JSON.stringify(message.content)))
}

export const listDir = (dir: string) => {
  try {
    return readdirSync(dir)
  } catch {
    return []
  }
}
