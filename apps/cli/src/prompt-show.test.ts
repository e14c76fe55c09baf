import { mkdirSync, writeFileSync } from 'node:fs'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { tempHome } from '../../../packages/boot/app-boot/src/test-support/temp-home.ts'
import { run } from './launcher.ts'
import type { PromptReport } from './prompt-show.ts'

const appDir = join(dirname(fileURLToPath(import.meta.url)), '..')

let home: ReturnType<typeof tempHome>
beforeEach(() => {
  home = tempHome()
  process.env.DSH_HOME = home.dir
})
afterEach(() => {
  delete process.env.DSH_HOME
  home.remove()
})

async function show(...argv: string[]) {
  let stdout = ''
  let stderr = ''
  // A writable as far as the tree uses one: write, and listeners for its errors (the headless surface's EPIPE).
  const sink = (add: (text: string) => void) => {
    const stream = { write: (chunk: string) => (add(chunk), true), on: () => stream, off: () => stream }
    return stream as unknown as NodeJS.WritableStream
  }
  const code = await run(['prompt', 'show', ...argv], {
    stdout: sink((text) => (stdout += text)),
    stderr: sink((text) => (stderr += text)),
    cwd: home.dir,
    appDir,
  })
  return { code, stdout, stderr }
}

const sectionsOf = (report: PromptReport) => report.parts.filter((part) => part.kind === 'section')
const toolsOf = (report: PromptReport) => report.parts.filter((part) => part.kind === 'tool').map((part) => part.name)

test('prompt show lists every section with its owner and token count, and the tools a request carries', async () => {
  const { code, stdout } = await show('--json')
  expect(code).toBe(0)
  const report = JSON.parse(stdout) as PromptReport
  const owners = Object.fromEntries(sectionsOf(report).map((part) => [part.name, part.owner]))
  expect(owners).toMatchObject({
    persona: '@dsh/system-prompt',
    'tool-use': '@dsh/tools',
    files: '@dsh/tool-fs',
    search: '@dsh/tool-fs-search',
    shell: '@dsh/tool-bash',
    authority: '@dsh/sandbox-policy',
    approvals: '@dsh/approval',
  })
  for (const part of report.parts) expect(part.tokens, part.name).toBeGreaterThan(0)
  expect(sectionsOf(report)[0]!.text).toContain(`in the repository at ${home.dir}`)
  expect(toolsOf(report)).toEqual(
    expect.arrayContaining(['bash', 'read', 'write', 'edit', 'glob', 'grep', 'str_replace_editor']),
  )
  expect(report.systemTokens).toBe(
    Math.ceil(
      sectionsOf(report)
        .map((part) => part.text)
        .join('\n\n').length / 4,
    ),
  )
  // The default prompt and tools stay well under the 10k-token budget of docs/prompt.md.
  expect(report.systemTokens + report.toolTokens).toBeLessThan(6000)
})

test("disabling a tool's row removes its section and its tools from the prompt", async () => {
  const patch = home.write('no-search.yml', '- id: tool-fs-search\n  disabled: true\n')
  const report = JSON.parse((await show('--json', '--patch', patch)).stdout) as PromptReport
  expect(sectionsOf(report).map((part) => part.name)).not.toContain('search')
  expect(toolsOf(report)).not.toContain('glob')
  expect(toolsOf(report)).not.toContain('grep')
  expect(sectionsOf(report).map((part) => part.name)).toContain('files')
})

test('the text form names each section, its owner and tokens, and the total', async () => {
  const { code, stdout } = await show()
  expect(code).toBe(0)
  expect(stdout).toMatch(
    /^# system prompt for profile headless, route [\w-]+\/[\w.-]+\n# \d+ tokens in \d+ sections; tool schemas \d+ tokens \(\d+ tools\); total \d+ \(estimated\)\n/,
  )
  expect(stdout).toMatch(/\n## persona — @dsh\/system-prompt, \d+ tokens\nYou are dsh/)
  expect(stdout).toMatch(/\nstr_replace_editor +\d+\n/)
})

test('an unknown subcommand or argument is a usage error naming it', async () => {
  expect(
    await run(['prompt', 'list'], {
      stdout: { write: () => true } as never,
      stderr: { write: () => true } as never,
      cwd: home.dir,
      appDir,
    }),
  ).toBe(2)
  const { code, stderr } = await show('--verbose')
  expect(code).toBe(2)
  expect(stderr).toBe(
    'dsh: dsh prompt show: unknown argument "--verbose" (--profile, --patch, --permission <permission preset>, --preset <agent preset>, --json)\n',
  )
})

test('the runtime context a new session here would log is shown, under the mode of --permission', async () => {
  const report = JSON.parse((await show('--json', '--permission', 'read-only')).stdout) as PromptReport
  const context = report.parts.find((part) => part.kind === 'context')!
  expect(context).toMatchObject({ name: 'runtime-context', owner: '@dsh/runtime-context' })
  expect(context.text).toContain(`- Working directory: ${home.dir}`)
  expect(context.text).toContain('- Sandbox mode: read-only')
  expect(report.mode).toBe('read-only')
  const byDefault = JSON.parse((await show('--json')).stdout) as PromptReport
  expect(byDefault.mode).toBe('workspace-write')
  const { code, stderr } = await show('--permission', 'everything')
  expect(code).toBe(2)
  expect(stderr).toContain('dsh: dsh prompt show: unknown permission preset "everything"')
})

test('the memory a new session here would read is shown with its size, after the memory section', async () => {
  mkdirSync(join(home.dir, 'memory'), { recursive: true })
  writeFileSync(join(home.dir, 'memory', 'user.md'), '- Prefers tabs\n')
  const { code, stdout } = await show()
  expect(code).toBe(0)
  expect(stdout).toContain('## memory — @dsh/tool-memory, ')
  expect(stdout).toContain(
    `15 bytes (read by every new session here: user: 1 entry, 15 bytes, ${join(home.dir, 'memory', 'user.md')})\n`,
  )
  expect(stdout).toContain('<memory scope="user">\n1. Prefers tabs\n</memory>')
  const report = JSON.parse((await show('--json')).stdout) as PromptReport
  expect(sectionsOf(report).find((part) => part.name === 'memory')?.owner).toBe('@dsh/tool-memory')
  expect(report.parts.find((part) => part.kind === 'memory')).toMatchObject({ bytes: 15, files: [{ scope: 'user' }] })
})

test('--preset lists the tools a new session of that agent preset is offered; an unknown one is a usage error', async () => {
  const report = JSON.parse((await show('--json', '--preset', 'minimal')).stdout) as PromptReport
  expect(toolsOf(report)).toEqual(['bash', 'str_replace_editor'])
  expect(report.agentPreset).toBe('minimal')
  // minimal mounts the persistent bash for its agent: the preview shows that bash and its shell section.
  expect(sectionsOf(report).find((part) => part.name === 'shell')?.owner).toBe('@dsh/tool-bash-persistent')
  expect(report.parts.find((part) => part.kind === 'tool' && part.name === 'bash')?.text).toMatch(
    /^Run a bash command in your persistent shell/,
  )
  const explore = JSON.parse((await show('--json', '--preset', 'explore')).stdout) as PromptReport
  const sections = sectionsOf(explore).map((part) => part.name)
  expect(sections).toEqual(expect.arrayContaining(['persona', 'files', 'search']))
  expect(sections.filter((name) => ['shell', 'files-change', 'editor'].includes(name))).toEqual([])
  expect(toolsOf(explore)).not.toContain('bash')
  const { code, stderr } = await show('--preset', 'everything')
  expect(code).toBe(2)
  expect(stderr).toContain('dsh: dsh prompt show: there is no agent preset "everything"')
})
