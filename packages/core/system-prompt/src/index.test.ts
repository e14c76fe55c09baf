import type { Context } from '@dsh/cordis'
import { afterEach, expect, test } from 'vitest'
import { bootComposition, scriptedPatch, type Harness } from '@dsh/test-harness'
import { render, type PromptVariables } from './index.ts'

// The system prompt as the headless composition assembles it (the loop logs it as `request/header`).
let h: Harness
afterEach(async () => h?.dispose())

const route = { provider: 'scripted', model: 'scripted-1' }
const assemble = (extra: { override?: string; vars?: Record<string, string> } = {}) =>
  h.root.systemPrompt.assemble({ cwd: '/work/repo', route, tools: ['bash', 'read'], ...extra })

async function boot(rows = '') {
  h = await bootComposition({ patch: scriptedPatch({}, rows) })
}

/** Adds a section from a plugin of its own, so disposing that plugin removes it. */
function sectionPlugin(name: string, order: number, text: string | ((vars: PromptVariables) => string)) {
  return h.root.plugin({
    name: `section-${name}`,
    inject: ['systemPrompt'],
    apply: (ctx: Context) => ctx.systemPrompt.section(ctx, { name, order, text }),
  })
}

test('the persona comes first, with the working directory, the OS and today filled in', async () => {
  await boot()
  const prompt = await assemble()
  expect(prompt.startsWith('You are dsh, a coding agent working in the repository at /work/repo on ')).toBe(true)
  expect(prompt).toContain(`Today is ${new Date().toISOString().slice(0, 10)}.`)
  expect(prompt).not.toMatch(/\{\{\s*(cwd|os|date)\s*\}\}/)
})

test('sections follow their order, then their name; variables of every kind are filled; blank ones are left out', async () => {
  await boot()
  await sectionPlugin('zeta', 50, 'Z on {{model}} via {{ provider }}.')
  await sectionPlugin('alpha', 50, 'A with tools {{tools}} and {{team}}.')
  await sectionPlugin('first', 10, (vars) => `F in ${vars.cwd}.`)
  await sectionPlugin('blank', 60, '   ')
  const prompt = await assemble({ vars: { team: 'the core team' } })
  const at = (text: string) => prompt.indexOf(text)
  expect(at('F in /work/repo.')).toBeGreaterThan(0)
  expect(at('F in /work/repo.')).toBeLessThan(at('A with tools bash, read and the core team.'))
  expect(at('A with tools bash, read and the core team.')).toBeLessThan(at('Z on scripted-1 via scripted.'))
  expect(prompt).not.toMatch(/\n\n\s*\n\n/)
})

test('an override replaces every section, and its variables are still filled', async () => {
  await boot()
  await sectionPlugin('extra', 5, 'Never shown.')
  expect(await assemble({ override: 'Only this, in {{cwd}}.' })).toBe('Only this, in /work/repo.')
})

test('the configured override applies unless a call brings its own', async () => {
  await boot(`- id: system-prompt\n  config: { override: 'Configured for {{model}}.' }\n`)
  expect(await assemble()).toBe('Configured for scripted-1.')
  expect(await assemble({ override: 'Called.' })).toBe('Called.')
})

test('an assemble listener may rewrite sections and variables before rendering', async () => {
  await boot()
  h.root.on('system-prompt/assemble', async (draft, next) => {
    const result = await next()
    return {
      ...result,
      sections: [...result.sections, { name: 'late', order: 999, text: 'Late for {{who}}.' }],
      vars: { ...result.vars, who: 'the listener' },
    }
  })
  expect((await assemble()).endsWith('Late for the listener.')).toBe(true)
})

test('a section name is taken once, and a section leaves with the plugin that added it', async () => {
  await boot()
  const fiber = sectionPlugin('mine', 20, 'Mine is here.')
  await fiber
  expect(() => h.root.systemPrompt.section(h.root, { name: 'mine', order: 1, text: 'again' })).toThrow(
    'system prompt section "mine" already exists',
  )
  expect(await assemble()).toContain('Mine is here.')
  await fiber.dispose()
  expect(await assemble()).not.toContain('Mine is here.')
})

test('an unknown placeholder is kept as written', () => {
  const vars = { cwd: '/r', provider: 'p', model: 'm', date: 'd', os: 'o', shell: 's', tools: 't' }
  expect(render('{{cwd}} {{missing}} {{ model }} {{not a name}}', vars)).toBe('/r {{missing}} m {{not a name}}')
})

test('a section names its owner, or the plugin that added it, and render gives each section apart', async () => {
  await boot()
  await sectionPlugin('unowned', 30, 'No owner given.')
  await h.root.plugin({
    name: 'owned-plugin',
    inject: ['systemPrompt'],
    apply: (ctx: Context) =>
      ctx.systemPrompt.section(ctx, { name: 'owned', order: 31, owner: '@dsh/example', text: 'Owned.' }),
  })
  const { sections } = await h.root.systemPrompt.render({ cwd: '/work/repo', route, tools: ['bash', 'read'] })
  expect(sections.find((section) => section.name === 'unowned')).toEqual({
    name: 'unowned',
    order: 30,
    owner: 'section-unowned',
    text: 'No owner given.',
  })
  expect(sections.find((section) => section.name === 'owned')?.owner).toBe('@dsh/example')
  expect(await assemble()).toBe(sections.map((section) => section.text).join('\n\n'))
})

test('the persona names the todo tool only when one is offered', async () => {
  await boot()
  expect(await assemble()).toContain('make a short plan first, then keep to it')
  expect(await h.root.systemPrompt.assemble({ cwd: '/r', route, tools: ['bash', 'todo_write'] })).toContain(
    'make a short plan first with the todo_write tool, then keep to it',
  )
})

test('a section that describes tools is left out when the agent is not offered every one of them', async () => {
  await boot()
  await h.root.plugin({
    name: 'tool-sections',
    inject: ['systemPrompt'],
    apply: (ctx: Context) => {
      ctx.systemPrompt.section(ctx, { name: 'shell-advice', order: 22, text: 'Shell advice.', tools: ['bash'] })
      ctx.systemPrompt.section(ctx, { name: 'edit-advice', order: 23, text: 'Edit advice.', tools: ['edit', 'write'] })
    },
  })
  const withBash = await h.root.systemPrompt.assemble({ cwd: '/r', route, tools: ['bash', 'edit'] })
  expect(withBash).toContain('Shell advice.')
  expect(withBash).not.toContain('Edit advice.')
  const readOnly = await h.root.systemPrompt.assemble({ cwd: '/r', route, tools: ['read'] })
  expect(readOnly).not.toContain('Shell advice.')
  expect(readOnly).toContain('You are dsh')
  expect(await h.root.systemPrompt.assemble({ cwd: '/r', route, tools: ['bash', 'edit', 'write'] })).toContain(
    'Shell advice.\n\nEdit advice.',
  )
})

test("an agent's own section joins only that agent's prompt, in place of a global section of its name", async () => {
  await boot()
  await h.root.plugin({
    name: 'agent-sections',
    inject: ['systemPrompt'],
    apply: (ctx: Context) => {
      ctx.systemPrompt.section(ctx, { name: 'advice', order: 22, text: 'Global advice.' })
      ctx.systemPrompt.section(
        ctx,
        { name: 'advice', order: 22, text: 'Advice for agent one.' },
        { agentId: 'agent-1' },
      )
    },
  })
  const forAgent = (agentId?: string) =>
    h.root.systemPrompt.assemble({ cwd: '/r', route, tools: [], ...(agentId ? { agentId } : {}) })
  expect(await forAgent('agent-1')).toContain('Advice for agent one.')
  expect(await forAgent('agent-1')).not.toContain('Global advice.')
  expect(await forAgent('agent-2')).toContain('Global advice.')
  expect(await forAgent('agent-2')).not.toContain('Advice for agent one.')
  expect(await forAgent()).toContain('Global advice.')
  expect(() =>
    h.root.systemPrompt.section(h.root, { name: 'advice', order: 1, text: 'again' }, { agentId: 'agent-1' }),
  ).toThrow('system prompt section "advice" already exists for agent agent-1')
})
