import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { bootTree, type BootedTree } from '@dsh/app-boot'
import { tempHome } from '../../../packages/boot/app-boot/src/test-support/temp-home.ts'
import { RUN_OPTIONS } from '@dsh/headless'
import { HELP, parseLauncherArgs } from './args.ts'
import { chooseProfile, run } from './launcher.ts'

const appDir = join(dirname(fileURLToPath(import.meta.url)), '..')
const probe = join(appDir, 'src/fixtures/probe-plugin.mjs')

let home: ReturnType<typeof tempHome>
beforeEach(() => {
  home = tempHome()
  process.env.DSH_HOME = home.dir
})
afterEach(() => {
  delete process.env.DSH_HOME
  home.remove()
})

function sink() {
  let text = ''
  // A writable as far as the tree uses one: write, and listeners for its errors (the headless surface's EPIPE).
  const stream = { write: (chunk: string) => ((text += chunk), true), on: () => stream, off: () => stream }
  return { stream: stream as any, text: () => text }
}

async function launch(argv: string[]) {
  const stdout = sink()
  const stderr = sink()
  const code = await run(argv, { stdout: stdout.stream, stderr: stderr.stream, cwd: home.dir, appDir })
  return { code, stdout: stdout.text(), stderr: stderr.text() }
}

const journal = () =>
  existsSync(join(home.dir, 'journal')) ? readFileSync(join(home.dir, 'journal'), 'utf8').trim().split('\n') : []

/** Three patches a user might write: disable a row, replace a config, insert a row into a group. */
function writeUserPatches() {
  home.write('cordis.patch.yml', `- insert:\n    - id: extras\n      children: []\n`)
  // The headless surface reads its arguments through cmdline: disabling cmdline takes its dependent along.
  const disable = home.write('disable.yml', '- id: cmdline\n  disabled: true\n- id: headless\n  disabled: true\n')
  const config = home.write('config.yml', '- id: logger\n  config: { level: error }\n')
  const insert = home.write(
    'insert.yml',
    `- insert:\n    - id: probe\n      name: ${probe}\n      config: { journal: ${join(home.dir, 'journal')}, label: grouped }\n  into: extras\n`,
  )
  return { disable, config, insert }
}

describe('dump-config', () => {
  test('prints the composed tree with the layers that touched each row', async () => {
    const { disable, config, insert } = writeUserPatches()
    const { code, stdout } = await launch([
      '--profile',
      'headless',
      '--patch',
      disable,
      '--patch',
      config,
      '--patch',
      insert,
      '--dump-config',
    ])
    expect(code).toBe(0)
    expect(stdout).toContain(
      '# bundle @dsh/bundle-base:7 (insert, name); --patch ' + disable + ':1 (disabled)\n- id: cmdline',
    )
    expect(stdout).toMatch(
      /--patch .*config\.yml:1 \(config\)\n- id: logger\n  name: "@dsh\/logger"\n  config:\n    level: error\n/,
    )
    expect(stdout).toContain(`# home ${join(home.dir, 'cordis.patch.yml')}:2 (insert)\n- id: extras`)
    expect(stdout).toMatch(/children:\n {4}# --patch .*insert\.yml:2 \(insert, name, config\)\n {4}- id: probe/)
    expect(journal()).toEqual([]) // nothing booted
  })
})

describe('booted tree', () => {
  let tree: BootedTree | undefined
  afterEach(async () => {
    await tree?.stop()
    tree = undefined
  })

  test('shows the disabled row, the replaced config and the row inserted into a group', async () => {
    const { disable, config, insert } = writeUserPatches()
    tree = await bootTree({
      appDir,
      profile: 'headless',
      patches: [disable, config, insert],
      cwd: home.dir,
      home: home.dir,
    })
    const store = (tree.loader as any).store
    expect(store.cmdline.fiber).toBeUndefined()
    expect(tree.root.get('cmdlineArgs')).toBeUndefined()
    expect(store.logger.fiber.config).toEqual({ level: 'error', colors: false, stacks: false })
    expect(store.probe.parent).toBe(store.extras.subgroup)
    expect(journal()).toEqual(['up "grouped"'])
  })

  test('disabling a row at runtime undoes its effects; enabling re-applies them', async () => {
    home.write(
      'cordis.patch.yml',
      `- insert: [{ id: probe, name: ${probe}, config: { journal: ${join(home.dir, 'journal')} } }]\n`,
    )
    tree = await bootTree({ appDir, profile: 'headless', cwd: home.dir, home: home.dir })
    ;(tree.root as any).emit('probe/ping')
    expect(tree.root.get('probe')).toBeDefined()

    await tree.loader.update('probe', { disabled: true })
    ;(tree.root as any).emit('probe/ping')
    expect(tree.root.get('probe')).toBeUndefined()

    await tree.loader.update('probe', { disabled: null })
    await tree.loader.await()
    ;(tree.root as any).emit('probe/ping')
    expect(tree.root.get('probe')).toBeDefined()
    expect(journal()).toEqual(['up null', 'pong', 'down', 'up null', 'pong'])
  })

  test('!!js in config and disabled is evaluated in the row context once its injections are ready', async () => {
    home.write(
      'cordis.patch.yml',
      [
        `- insert:`,
        `    - id: probe`,
        `      name: ${probe}`,
        `      inject: [cmdlineArgs]`,
        `      config: { journal: ${join(home.dir, 'journal')}, label: !!js 'cmdlineArgs.argv.join("+")' }`,
        `    - id: off`,
        `      name: ${probe}`,
        `      inject: [cmdlineArgs]`,
        `      disabled: !!js 'cmdlineArgs.argv.length > 1'`,
        `      config: { journal: ${join(home.dir, 'journal')}, label: never }`,
      ].join('\n'),
    )
    tree = await bootTree({ appDir, profile: 'headless', cwd: home.dir, home: home.dir, argv: ['a', 'b'] })
    expect(journal()).toEqual(['up "a+b"'])
  })
})

describe('user errors exit 2 with one message naming what was wrong and where', () => {
  test.each([
    [
      'an unknown profile',
      () => ['--profile', 'desktop', '--check'],
      () => 'dsh: unknown profile "desktop" (expected one of: tui, web, headless, sdk, acp)\n',
    ],
    [
      'a missing patch file',
      () => ['--patch', join(home.dir, 'nope.yml'), '--check'],
      () => `dsh: ${join(home.dir, 'nope.yml')}: patch file not found\n`,
    ],
    [
      'a malformed patch file',
      () => ['--patch', home.write('bad.yml', '- id: logger\n  config: {level: [\n'), '--check'],
      () => new RegExp(`^dsh: ${home.dir}/bad\\.yml:\\d+: malformed YAML`),
    ],
    [
      'a patch item of the wrong shape',
      () => ['--patch', home.write('shape.yml', '- id: logger\n  colour: red\n'), '--check'],
      () =>
        `dsh: ${home.dir}/shape.yml:2: unexpected key "colour" (a row change may set name, config, disabled, inject, isolate)\n`,
    ],
    [
      'an id that matches no row',
      () => ['--patch', home.write('id.yml', '- id: loger\n  disabled: true\n'), '--check'],
      () => new RegExp(`^dsh: ${home.dir}/id\\.yml:1: no row has id "loger" \\(known ids: logger, cmdline, .*\\)\\n$`),
    ],
    [
      'a config that fails its schema',
      () => ['--patch', home.write('type.yml', '# wrong type\n- id: logger\n  config: { level: loud }\n'), '--check'],
      () => new RegExp(`^dsh: ${home.dir}/type\\.yml:3: row "logger" \\(@dsh/logger\\): config\\.level: .+\\n$`),
    ],
    [
      'a config key the plugin does not have',
      () => ['--patch', home.write('key.yml', '- id: logger\n  config: { level: warn, colour: red }\n'), '--check'],
      () =>
        `dsh: ${home.dir}/key.yml:2: row "logger" (@dsh/logger): config.colour is not a setting of this plugin (known: level, colors, stacks)\n`,
    ],
    [
      'a plugin that cannot be found',
      () => ['--patch', home.write('name.yml', '- insert: [{ id: x, name: "@dsh/does-not-exist" }]\n'), '--check'],
      () =>
        `dsh: ${home.dir}/name.yml:1: plugin "@dsh/does-not-exist" of row "x" cannot be found (is the package a dependency of a bundle of this profile?)\n`,
    ],
    ['a launcher option without its value', () => ['--patch'], () => 'dsh: --patch needs a value (see dsh --help)\n'],
  ])('%s', async (_what, argv, expectedMessage) => {
    const { code, stdout, stderr } = await launch(argv())
    const expected = expectedMessage()
    expect(code).toBe(2)
    expect(stdout).toBe('')
    if (typeof expected === 'string') expect(stderr).toBe(expected)
    else expect(stderr).toMatch(expected)
    expect(stderr).not.toMatch(/\n\s+at /) // never a stack trace
  })
})

describe('rows that fail to apply', () => {
  const throwing = join(appDir, 'src/fixtures/throwing-plugin.mjs')

  test('exit 1 naming the row and the error, in-process and from the real binary', async () => {
    const patch = home.write(
      'bad.yml',
      `- insert: [{ id: broken, name: ${throwing}, config: { message: 'cannot reach the thing' } }]\n`,
    )
    const { code, stderr } = await launch(['--patch', patch, '--check'])
    expect(code).toBe(1)
    expect(stderr).toBe(
      'dsh: the plugin tree did not boot:\n  row "broken" (' + throwing + '): cannot reach the thing\n',
    )
    const bin = spawn(process.execPath, [join(appDir, 'bin/dsh.js'), '--patch', patch, '--check'], {
      env: { ...process.env, DSH_HOME: home.dir },
    })
    let err = ''
    bin.stderr.on('data', (chunk) => (err += chunk))
    const exit = await new Promise((resolve) => bin.on('exit', resolve))
    expect(exit).toBe(1)
    expect(err).toContain('row "broken"')
    expect(err).toContain('cannot reach the thing')
  })

  test('a flag a surface does not know is one line and exit 2, without the rows that waited on it', async () => {
    const { code, stderr } = await launch(['web', '--bogus', '--no-open'])
    expect(code).toBe(2)
    expect(stderr).toBe("dsh: Unknown option '--bogus'\n")
  })

  test('a plugin rejecting a file the user wrote is a user mistake: exit 2', async () => {
    const patch = home.write(
      'bad.yml',
      `- insert: [{ id: broken, name: ${throwing}, config: { message: 'settings.yaml:3: bad value', file: settings.yaml } }]\n`,
    )
    const { code, stderr } = await launch(['--patch', patch, '--check'])
    expect(code).toBe(2)
    expect(stderr).toContain('settings.yaml:3: bad value')
  })
})

describe('the dsh binary', () => {
  const bin = join(appDir, 'bin/dsh.js')
  function spawnDsh(args: string[]) {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: home.dir,
      env: { ...process.env, DSH_HOME: home.dir },
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    return { child, exited, out: () => stdout, err: () => stderr }
  }

  test('--version, --help and `dsh web --check` run from the built launcher', async () => {
    const version = spawnDsh(['--version'])
    expect(await version.exited).toBe(0)
    expect(version.out()).toMatch(/^dsh \d+\.\d+\.\d+\n$/)
    const check = spawnDsh(['web', '--check'])
    expect(await check.exited).toBe(0)
    expect(check.out()).toContain('logger\t@dsh/logger\tactive')
  })

  test('the first SIGINT drains the tree and exits 130', async () => {
    home.write(
      'cordis.patch.yml',
      `- insert: [{ id: probe, name: ${probe}, config: { journal: ${join(home.dir, 'journal')}, hold: true } }]\n`,
    )
    const dsh = spawnDsh(['--profile', 'headless'])
    await waitFor(() => journal().length === 1)
    dsh.child.kill('SIGINT')
    expect(await dsh.exited).toBe(130)
    expect(journal()).toEqual(['up null', 'down'])
  })
})

describe('signals', () => {
  test('a second SIGINT exits at once when draining hangs', async () => {
    home.write(
      'cordis.patch.yml',
      `- insert: [{ id: probe, name: ${probe}, config: { journal: ${join(home.dir, 'journal')}, hold: true, hangOnDispose: true } }]\n`,
    )
    const child = spawn(process.execPath, [join(appDir, 'bin/dsh.js'), '--profile', 'headless'], {
      cwd: home.dir,
      env: { ...process.env, DSH_HOME: home.dir },
    })
    let stderr = ''
    child.stderr.on('data', (chunk) => (stderr += chunk))
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    await waitFor(() => journal().length === 1)
    child.kill('SIGINT')
    await waitFor(() => journal().includes('hanging'))
    child.kill('SIGINT')
    expect(await exited).toBe(130)
    expect(stderr).toContain('second SIGINT, exiting without draining')
  })

  test('a drain that never finishes ends at DSH_DRAIN_TIMEOUT_MS', async () => {
    home.write(
      'cordis.patch.yml',
      `- insert: [{ id: probe, name: ${probe}, config: { journal: ${join(home.dir, 'journal')}, hold: true, hangOnDispose: true } }]\n`,
    )
    const child = spawn(process.execPath, [join(appDir, 'bin/dsh.js'), '--profile', 'headless'], {
      cwd: home.dir,
      env: { ...process.env, DSH_HOME: home.dir, DSH_DRAIN_TIMEOUT_MS: '300' },
    })
    let stderr = ''
    child.stderr.on('data', (chunk) => (stderr += chunk))
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    await waitFor(() => journal().length === 1)
    child.kill('SIGTERM')
    expect(await exited).toBe(143)
    expect(stderr).toBe('dsh: the plugin tree did not finish draining within 300 ms; exiting\n')
  })
})

describe('settings keys', () => {
  test('a typo in settings.yaml is exit 2 at boot, naming the file, the line and the nearest known key', async () => {
    home.write('settings.yaml', '# mine\npermisions.allow: [bash(npm test)]\n')
    const { code, stderr } = await launch(['--profile', 'sdk', '--check'])
    expect(code).toBe(2)
    expect(stderr).toBe(
      `dsh: ${join(home.dir, 'settings.yaml')}:2: unknown setting "permisions.allow": no plugin of any profile defines it (did you mean "permissions.allow"?)\n`,
    )
  })

  test('a key of a plugin that only another profile mounts is accepted', async () => {
    home.write('settings.yaml', 'web.defaultPreset: read-only\n')
    expect(await launch(['--profile', 'headless', '--check'])).toMatchObject({ code: 0, stderr: '' })
  })

  test('a key far from every known one gets no suggestion', async () => {
    home.write('settings.yaml', 'zzz.qqq: 1\n')
    const { code, stderr } = await launch(['--profile', 'headless', '--check'])
    expect(code).toBe(2)
    expect(stderr).toMatch(/unknown setting "zzz\.qqq": no plugin of any profile defines it\n$/)
  })
})

describe('help', () => {
  test('`dsh help` is --help: it prints the help instead of sending "help" to a model', () => {
    expect(parseLauncherArgs(['help'])).toMatchObject({ help: true, rest: [] })
    // Later in the line it is a word of a task.
    expect(parseLauncherArgs(['explain', 'help'])).toMatchObject({ help: false, rest: ['explain', 'help'] })
  })

  test('the help names every flag a headless run accepts, the exit codes and the key variables', () => {
    for (const flag of Object.keys(RUN_OPTIONS)) expect(HELP).toContain(`--${flag}`)
    for (const code of ['0 ', '1 ', '2 ', '130']) expect(HELP).toMatch(new RegExp(`^  ${code}`, 'm'))
    for (const name of ['DSH_HOME', 'DEEPSEEK_API_KEY', 'ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'DSH_DRAIN_TIMEOUT_MS'])
      expect(HELP).toContain(name)
  })

  test('the help says which limit --max-steps and --max-turns set: the per-turn steps, in place of the setting', () => {
    expect(HELP).toMatch(
      /^  --max-steps <n> +each turn of this run stops after n steps \(model requests\), in place of the\n +agent\.maxSteps setting/m,
    )
    expect(HELP).toMatch(/^  --max-turns <n> +the same per-turn step limit/m)
  })
})

describe('command words', () => {
  test('sessions, resume and fork as the first argument choose the headless profile and stay for the tree', () => {
    expect(parseLauncherArgs(['sessions', 'list', '--json'])).toMatchObject({
      profile: 'headless',
      rest: ['sessions', 'list', '--json'],
    })
    expect(parseLauncherArgs(['grants', 'revoke', 'g-1234abcd'])).toMatchObject({
      profile: 'headless',
      rest: ['grants', 'revoke', 'g-1234abcd'],
    })
    expect(parseLauncherArgs(['usage', '--by', 'day'])).toMatchObject({
      profile: 'headless',
      rest: ['usage', '--by', 'day'],
    })
    expect(parseLauncherArgs(['resume', 'abc', 'more'])).toMatchObject({
      profile: 'headless',
      rest: ['resume', 'abc', 'more'],
    })
    expect(parseLauncherArgs(['fork', 'abc', '--at', '3', 'task', '--patch', 'p.yml'])).toMatchObject({
      profile: 'headless',
      patches: ['p.yml'],
      rest: ['fork', 'abc', '--at', '3', 'task'],
    })
  })

  test('later in the line they are words of a task', () => {
    const args = parseLauncherArgs(['--json', 'resume'])
    expect(args.profile).toBeUndefined()
    expect(args.rest).toEqual(['--json', 'resume'])
  })
})

describe('the launch handed to surfaces', () => {
  /** A surface fixture: journals `app/launched`, `app/draining` and its own disposal. */
  function surface(journalFile: string) {
    return home.write(
      'surface.mjs',
      [
        `import { appendFileSync } from 'node:fs'`,
        `const note = (line) => appendFileSync(${JSON.stringify(journalFile)}, line + '\\n')`,
        `export const name = 'surface'`,
        `export function apply(ctx) {`,
        `  ctx.on('app/launched', () => note('launched'))`,
        `  ctx.on('app/draining', async (reason) => { await new Promise((r) => setTimeout(r, 50)); note('draining ' + JSON.stringify(reason)) })`,
        `  ctx.effect(() => { const timer = setInterval(() => {}, 1000); return () => { clearInterval(timer); note('disposed') } })`,
        `}`,
      ].join('\n'),
    )
  }

  test('surfaces hear app/launched after boot, and app/draining before anything is disposed', async () => {
    const file = surface(join(home.dir, 'journal'))
    home.write('cordis.patch.yml', `- insert: [{ id: surface, name: ${file} }]\n`)
    const child = spawn(
      process.execPath,
      [join(appDir, 'bin/dsh.js'), '--profile', 'web', '--port', '0', '--no-open'],
      { cwd: home.dir, env: { ...process.env, DSH_HOME: home.dir } },
    )
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    await waitFor(() => journal().includes('launched'))
    child.kill('SIGINT')
    expect(await exited).toBe(130)
    expect(journal()).toEqual(['launched', 'draining {"code":130,"signal":"SIGINT"}', 'disposed'])
  })

  test('--check boots the tree without launching it', async () => {
    const file = surface(join(home.dir, 'journal'))
    home.write('cordis.patch.yml', `- insert: [{ id: surface, name: ${file} }]\n`)
    const { code } = await launch(['--profile', 'web', '--check'])
    expect(code).toBe(0)
    expect(journal()).toEqual(['draining {"code":0}', 'disposed'])
  })
})

async function waitFor(condition: () => boolean, timeoutMs = 40_000) {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describe('the profile of a launch that names none', () => {
  const terminal = { stdin: { isTTY: true }, stdout: { isTTY: true } }
  const piped = { stdin: { isTTY: false }, stdout: { isTTY: true } }
  const of = (argv: string[], io = terminal) => chooseProfile(parseLauncherArgs(argv), io)
  test('dsh alone on a terminal, dsh tui and dsh resume with no id on a terminal open the terminal UI', () => {
    expect(of([])).toBe('tui')
    expect(of(['tui', 'first message'])).toBe('tui')
    expect(of(['resume'])).toBe('tui')
  })
  test('a task, a resume with an id, piped input or output, and a named profile stay as they were', () => {
    expect(of(['fix the test'])).toBe('headless')
    expect(of(['resume', 'abc', 'more'])).toBe('headless')
    expect(of([], piped)).toBe('headless')
    expect(of(['resume'], piped)).toBe('headless')
    expect(of([], { stdin: { isTTY: true }, stdout: { isTTY: false } })).toBe('headless')
    expect(of(['--profile', 'headless', 'resume'])).toBe('headless')
    expect(of(['web'])).toBe('web')
  })
})
