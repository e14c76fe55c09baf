import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { bootTree, type BootedTree } from '@dsh/app-boot'
import type {} from '@dsh/agent'
import { agentHarness, type AgentHarness } from './agent.ts'
import { WITHOUT_AUTO_TITLE } from './scripted.ts'

export type { AgentHarness }
export {
  scriptedPatch,
  toolCall,
  WITHOUT_AUTO_TITLE,
  WITHOUT_RUNTIME_CONTEXT,
  type ScriptedPatchOptions,
} from './scripted.ts'
export { ECHO_TOOL, streamOnce } from './stream.ts'
export { dshInProcess, launchInProcess, type InProcessLaunch, type InProcessOptions } from './launch.ts'

export interface CompositionOptions {
  /** Profile to boot (default `headless`): its real bundles are the first layers. */
  profile?: string
  /** YAML patch text applied as a `--patch` layer after everything else (written to the temp home). */
  patch?: string
  /** More `--patch` arguments (files or bundle patch names), before `patch`. */
  patches?: string[]
  /** Files to create in the temp `DSH_HOME` before boot (`{ 'cordis.patch.yml': '…' }`). */
  homeFiles?: Record<string, string>
  /** Files to create in the temp workspace (the tree's cwd). */
  workspaceFiles?: Record<string, string>
  argv?: string[]
  /** Use this home instead of a temp one (kept on dispose): for tests that restart a composition. */
  home?: string
  /** Use this workspace instead of a temp one (kept on dispose). */
  workspace?: string
}

export interface Harness extends BootedTree, AgentHarness {
  /** The temp `DSH_HOME`. */
  home: string
  /** The temp workspace the tree runs in (its cwd). */
  workspace: string
  /** Codes the tree asked the launcher to exit with (`ctx.app.requestExit`). */
  exitRequests: number[]
  /** Stops the tree and removes the temp folders. */
  dispose(): Promise<void>
}

/** The real launcher's package directory: its profiles and bundles are what the product boots. */
/** Resolves test-support plugin names (`@dsh/llm-scripted`, fixtures) in test patches. */
const importer = fileURLToPath(new URL('../import.js', import.meta.url))

export const appDir = dirname(createRequire(import.meta.url).resolve('@dsh/cli/package.json'))

function writeTree(root: string, files: Record<string, string> = {}) {
  for (const [relative, text] of Object.entries(files)) {
    const file = join(root, relative)
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(file, text)
  }
}

/**
 * Boots a real composition the way `dsh` does (same profiles, bundles and composition), in a fresh temp
 * home and workspace. Only the model is ever fake, and only when a patch mounts a fake one.
 */
export async function bootComposition(options: CompositionOptions = {}): Promise<Harness> {
  const home = options.home ?? realpathSync(mkdtempSync(join(tmpdir(), 'dsh-home-')))
  const workspace = options.workspace ?? realpathSync(mkdtempSync(join(tmpdir(), 'dsh-ws-')))
  writeTree(home, options.homeFiles)
  writeTree(workspace, options.workspaceFiles)
  const withoutAutoTitle = join(home, 'without-auto-title.patch.yml')
  writeFileSync(withoutAutoTitle, WITHOUT_AUTO_TITLE)
  const patches = [withoutAutoTitle, ...(options.patches ?? [])]
  if (options.patch !== undefined) {
    const file = join(home, 'test.patch.yml')
    writeFileSync(file, options.patch)
    patches.push(file)
  }
  const exitRequests: number[] = []
  const cleanup = () => {
    if (!options.home) rmSync(home, { recursive: true, force: true })
    if (!options.workspace) rmSync(workspace, { recursive: true, force: true })
  }
  let tree: BootedTree
  try {
    tree = await bootTree({
      appDir,
      profile: options.profile ?? 'headless',
      patches,
      home,
      cwd: workspace,
      argv: options.argv ?? [],
      extraImporters: [importer],
      onExitRequest: (code) => exitRequests.push(code),
    })
  } catch (error) {
    cleanup()
    throw error
  }
  const harness = {
    ...tree,
    home,
    workspace,
    exitRequests,
    async dispose() {
      await tree.stop()
      cleanup()
    },
  } as Harness
  return Object.assign(harness, agentHarness(harness))
}
