import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import type { Context } from '@dsh/cordis'
import { defineTool, ToolError, Type, type ToolDefinition } from '@dsh/tools'

/**
 * Real tools for tests of the core spine (mounted by a patch: `name: '@dsh/test-harness/fixture-tools'`).
 * They act on real files and real time, so tests can assert the world; the model-facing tools of the
 * product live in their own packages.
 */
const tools: ToolDefinition[] = [
  defineTool({
    name: 'echo',
    description: 'Returns its text.',
    parameters: Type.Object({ text: Type.String() }, { additionalProperties: false }),
    concurrencySafe: true,
    execute: async (args) => args.text,
  }),
  defineTool({
    name: 'wait',
    description: 'Waits `ms` milliseconds (stops early when cancelled), then returns its label.',
    parameters: Type.Object({ ms: Type.Number(), label: Type.String() }),
    concurrencySafe: true,
    execute: (args, context) =>
      new Promise((done) => {
        if (context.signal.aborted) return done(`${args.label} stopped`)
        const timer = setTimeout(() => done(`${args.label} done`), args.ms)
        context.signal.addEventListener('abort', () => (clearTimeout(timer), done(`${args.label} stopped`)), {
          once: true,
        })
      }),
  }),
  defineTool({
    name: 'write_file',
    description: 'Writes text to a file under the workspace.',
    parameters: Type.Object({ path: Type.String(), text: Type.String() }),
    summarize: (args) => `write ${args.path}`,
    needsApproval: (args) =>
      args.path.startsWith('protected/') ? `it writes under protected/ (${args.path})` : undefined,
    execute: async (args, context) => {
      const file = resolve(context.cwd, args.path)
      mkdirSync(dirname(file), { recursive: true })
      writeFileSync(file, args.text)
      return `wrote ${Buffer.byteLength(args.text)} bytes to ${args.path}`
    },
  }),
  defineTool({
    name: 'read_file',
    description: 'Reads a file under the workspace.',
    parameters: Type.Object({ path: Type.String() }),
    concurrencySafe: true,
    execute: async (args, context) => {
      const file = resolve(context.cwd, args.path)
      if (!existsSync(file)) throw new ToolError('FS_NOT_FOUND', `${args.path} does not exist`)
      return readFileSync(file, 'utf8')
    },
  }),
]

export const name = 'fixture-tools'
export const inject = ['tools']

export function apply(ctx: Context) {
  for (const tool of tools) ctx.tools.register(ctx, tool)
}
