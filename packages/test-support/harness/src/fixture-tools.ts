import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import type { Context } from '@dsh/cordis'
import { ToolError, type ToolDefinition } from '@dsh/tools'

/**
 * Real tools for tests of the core spine (mounted by a patch: `name: '@dsh/test-harness/fixture-tools'`).
 * They act on real files and real time, so tests can assert the world; the model-facing tools of the
 * product live in their own packages.
 */
const tools: ToolDefinition[] = [
  {
    name: 'echo',
    description: 'Returns its text.',
    parameters: { type: 'object', required: ['text'], properties: { text: { type: 'string' } }, additionalProperties: false },
    concurrencySafe: true,
    execute: async (args: { text: string }) => args.text,
  },
  {
    name: 'wait',
    description: 'Waits `ms` milliseconds (stops early when cancelled), then returns its label.',
    parameters: { type: 'object', required: ['ms', 'label'], properties: { ms: { type: 'number' }, label: { type: 'string' } } },
    concurrencySafe: true,
    execute: (args: { ms: number; label: string }, context) =>
      new Promise((done) => {
        const timer = setTimeout(() => done(`${args.label} done`), args.ms)
        context.signal.addEventListener('abort', () => (clearTimeout(timer), done(`${args.label} stopped`)), { once: true })
      }),
  },
  {
    name: 'write_file',
    description: 'Writes text to a file under the workspace.',
    parameters: { type: 'object', required: ['path', 'text'], properties: { path: { type: 'string' }, text: { type: 'string' } } },
    summarize: (args: { path: string }) => `write ${args.path}`,
    needsApproval: (args: { path: string }) => (args.path.startsWith('protected/') ? `it writes under protected/ (${args.path})` : undefined),
    execute: async (args: { path: string; text: string }, context) => {
      const file = resolve(context.cwd, args.path)
      mkdirSync(dirname(file), { recursive: true })
      writeFileSync(file, args.text)
      return `wrote ${Buffer.byteLength(args.text)} bytes to ${args.path}`
    },
  },
  {
    name: 'read_file',
    description: 'Reads a file under the workspace.',
    parameters: { type: 'object', required: ['path'], properties: { path: { type: 'string' } } },
    concurrencySafe: true,
    execute: async (args: { path: string }, context) => {
      const file = resolve(context.cwd, args.path)
      if (!existsSync(file)) throw new ToolError('FS_NOT_FOUND', `${args.path} does not exist`)
      return readFileSync(file, 'utf8')
    },
  },
]

export const name = 'fixture-tools'
export const inject = ['tools']

export function apply(ctx: Context) {
  for (const tool of tools) ctx.tools.register(ctx, tool)
}
