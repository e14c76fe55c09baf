import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { toolCall } from '@dsh/test-harness'
import { tempDir } from '@dsh/test-harness/world'
import { boot, hooksFile, requestText } from './test-support/hooks.ts'

const jsonOut = (value: unknown) => `echo '${JSON.stringify(value)}'`

describe('PreToolUse', () => {
  test("a hook that exits 2 blocks a bash call: nothing runs, and the model's next request carries its stderr", async () => {
    const command = `jq -r .tool_input.command | grep -q touch && { echo "touch is not allowed in this repository" >&2; exit 2; }; exit 0`
    const h = await boot({ homeFiles: { 'hooks.json': hooksFile({ PreToolUse: [{ matcher: 'Bash', command }] }) } })
    h.root.scriptedLlm.enqueue(toolCall('c1', 'bash', { command: 'touch made.txt' }), { text: 'ok' })
    await h.run('make a file')
    expect(existsSync(join(h.workspace, 'made.txt'))).toBe(false)
    expect(h.toolResult('c1').error?.code).toBe('DENIED')
    expect(h.toolText('c1')).toContain('touch is not allowed in this repository')
    expect(requestText(h, 1)).toContain('touch is not allowed in this repository')
    const [run] = h.events('hook/run')
    expect(run!.data).toMatchObject({
      event: 'PreToolUse',
      matcher: 'Bash',
      callId: 'c1',
      origin: 'user',
      exitCode: 2,
      decision: 'block',
      timedOut: false,
    })
    expect(run!.data.stderr).toBe('touch is not allowed in this repository\n')
    expect(run!.data.inputDigest).toMatch(/^sha256:[0-9a-f]{64}$/)
    expect(run!.data.durationMs).toBeGreaterThanOrEqual(0)
  })

  test('a hook that does not match the tool is not run', async () => {
    const h = await boot({
      homeFiles: { 'hooks.json': hooksFile({ PreToolUse: [{ matcher: 'Edit|Write', command: 'exit 2' }] }) },
    })
    h.root.scriptedLlm.enqueue(toolCall('c1', 'bash', { command: 'touch made.txt' }), { text: 'ok' })
    await h.run('make a file')
    expect(existsSync(join(h.workspace, 'made.txt'))).toBe(true)
    expect(h.events('hook/run')).toHaveLength(0)
  })

  test('updatedInput rewrites the call: the edited command is what runs, and it is logged', async () => {
    const rewrite = jsonOut({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'allow',
        updatedInput: { command: 'echo rewritten > out.txt' },
      },
    })
    const h = await boot({
      homeFiles: { 'hooks.json': hooksFile({ PreToolUse: [{ matcher: 'Bash', command: rewrite }] }) },
    })
    h.root.scriptedLlm.enqueue(toolCall('c1', 'bash', { command: 'echo original > out.txt' }), { text: 'ok' })
    await h.run('write a file')
    expect(readFileSync(join(h.workspace, 'out.txt'), 'utf8')).toBe('rewritten\n')
    expect(h.events('tool/call')[0]!.data.arguments).toEqual({ command: 'echo original > out.txt' })
    expect(h.events('hook/updated-input').map((event) => event.data)).toEqual([
      { callId: 'c1', arguments: { command: 'echo rewritten > out.txt' }, file: join(h.home, 'hooks.json') },
    ])
    expect(h.events('hook/run')[0]!.data).toMatchObject({
      decision: 'allow',
      updatedInput: { command: 'echo rewritten > out.txt' },
    })
  })

  test("a Write hook sees Claude Code's names (tool_name Write, file_path) and its updatedInput is read back in dsh's", async () => {
    const shown = `input=$(cat); [ "$(echo "$input" | jq -r .tool_name)" = Write ] && [ "$(echo "$input" | jq -r .tool_input.file_path)" = "$CLAUDE_PROJECT_DIR/asked.txt" ] || exit 1`
    const command = `${shown}; ${jsonOut({ updatedInput: { file_path: 'moved.txt', content: 'from the hook' } })}`
    const h = await boot({ homeFiles: { 'hooks.json': hooksFile({ PreToolUse: [{ matcher: 'Write', command }] }) } })
    h.root.scriptedLlm.enqueue(toolCall('c1', 'write', { path: 'asked.txt', content: 'from the model' }), {
      text: 'ok',
    })
    await h.run('write a file')
    expect(existsSync(join(h.workspace, 'asked.txt'))).toBe(false)
    expect(readFileSync(join(h.workspace, 'moved.txt'), 'utf8')).toBe('from the hook')
    expect(h.events('hook/updated-input')[0]!.data.arguments).toEqual({ path: 'moved.txt', content: 'from the hook' })
  })

  test('an updatedInput the tool does not accept refuses the call, naming what is wrong', async () => {
    const h = await boot({
      homeFiles: {
        'hooks.json': hooksFile({ PreToolUse: [{ command: jsonOut({ updatedInput: { cmd: 'touch made.txt' } }) }] }),
      },
    })
    h.root.scriptedLlm.enqueue(toolCall('c1', 'bash', { command: 'true' }), { text: 'ok' })
    await h.run('go')
    expect(h.toolResult('c1').error?.code).toBe('DENIED')
    expect(h.toolText('c1')).toContain('rewrote the input into arguments bash does not accept')
    expect(existsSync(join(h.workspace, 'made.txt'))).toBe(false)
  })

  test('attack: a hook answering allow does not lift the sandbox — an unconfined call is still asked about, and refused with nobody to answer', async () => {
    const outside = tempDir('dsh-outside-')
    const allow = jsonOut({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'allow',
        permissionDecisionReason: 'hooks trust everything',
      },
    })
    const h = await boot({
      homeFiles: {
        'hooks.json': hooksFile({ PreToolUse: [{ command: allow }] }),
        'settings.yaml': 'permissions.deny:\n  - bash(rm *)\n',
      },
    })
    h.root.scriptedLlm.enqueue(
      toolCall('free', 'bash', { command: `touch ${outside}/pwned`, sandbox: false, justification: 'a hook said yes' }),
      toolCall('denied', 'bash', { command: 'rm -f keep.txt' }),
      toolCall('confined', 'bash', { command: `touch ${outside}/confined` }),
      { text: 'ok' },
    )
    await h.run('escape')
    expect(existsSync(join(outside, 'pwned'))).toBe(false)
    expect(h.toolResult('free').error?.code).toBe('APPROVAL_REJECTED')
    expect(h.events('approval/asked').map((event) => event.data.callId)).toEqual(['free'])
    expect(h.toolResult('denied').error?.code).toBe('DENIED') // a deny rule still refuses
    expect(existsSync(join(outside, 'confined'))).toBe(false) // and the confined call is still confined
    expect(h.events('hook/run').map((event) => event.data.decision)).toEqual(['allow', 'allow', 'allow'])
  })

  test("ask makes the call ask, with the hook's reason; nobody to answer refuses it", async () => {
    const ask = jsonOut({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'ask',
        permissionDecisionReason: 'this touches the release branch',
      },
    })
    const h = await boot({ homeFiles: { 'hooks.json': hooksFile({ PreToolUse: [{ command: ask }] }) } })
    h.root.scriptedLlm.enqueue(toolCall('c1', 'bash', { command: 'touch made.txt' }), { text: 'ok' })
    await h.run('go')
    expect(h.events('approval/asked')[0]!.data.reason).toContain('this touches the release branch')
    expect(h.toolResult('c1').error?.code).toBe('APPROVAL_REJECTED')
    expect(existsSync(join(h.workspace, 'made.txt'))).toBe(false)
  })

  test('a hanging hook is killed at its timeout with its process group, reported, and the call it guarded is refused', async () => {
    const h = await boot({
      homeFiles: {
        'hooks.json': hooksFile({ PreToolUse: [{ command: 'sleep 31337 & sleep 31338; wait', timeout: 1 }] }),
      },
    })
    h.root.scriptedLlm.enqueue(toolCall('c1', 'bash', { command: 'touch made.txt' }), { text: 'ok' })
    const started = Date.now()
    await h.run('go')
    expect(Date.now() - started).toBeLessThan(40_000) // the hook would sleep for hours
    const [run] = h.events('hook/run')
    expect(run!.data).toMatchObject({ timedOut: true, decision: 'error', reason: 'timed out after 1 s and was killed' })
    expect(h.toolResult('c1').error?.code).toBe('DENIED')
    expect(h.toolText('c1')).toContain('timed out after 1 s')
    expect(existsSync(join(h.workspace, 'made.txt'))).toBe(false)
    expect(() => execFileSync('pgrep', ['-f', 'sleep 3133[78]'])).toThrow() // pgrep exits 1: nothing left
  })

  test('continue: false refuses the call and stops the turn before the model is asked again', async () => {
    const h = await boot({
      homeFiles: {
        'hooks.json': hooksFile({
          PreToolUse: [{ command: jsonOut({ continue: false, stopReason: 'the build is broken, stop' }) }],
        }),
      },
    })
    h.root.scriptedLlm.enqueue(toolCall('c1', 'bash', { command: 'touch made.txt' }), { text: 'never asked' })
    const result = await h.run('go')
    expect(result.reason).toBe('aborted')
    expect(existsSync(join(h.workspace, 'made.txt'))).toBe(false)
    expect(h.toolText('c1')).toContain('a PreToolUse hook stopped the turn: the build is broken, stop')
    expect(h.root.scriptedLlm.requests).toHaveLength(1)
  })

  test('a malformed hooks file refuses tool calls, naming the file and the field', async () => {
    const bad = JSON.stringify({
      hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 42 }] }] },
    })
    const h = await boot({ homeFiles: { 'hooks.json': bad } })
    h.root.scriptedLlm.enqueue(toolCall('c1', 'bash', { command: 'touch made.txt' }), { text: 'ok' })
    await h.run('go')
    expect(existsSync(join(h.workspace, 'made.txt'))).toBe(false)
    expect(h.toolText('c1')).toContain(
      `${join(h.home, 'hooks.json')}: hooks.PreToolUse[0].hooks[0].command must be a non-empty string`,
    )
  })
})

describe('PostToolUse', () => {
  test("additionalContext is added to the result the model reads, and the hook gets the tool's input and response", async () => {
    const command = `tee "$CLAUDE_PROJECT_DIR/post.json" > /dev/null; ${jsonOut({ hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: 'lint found 2 warnings in a.ts' } })}`
    const h = await boot({ homeFiles: { 'hooks.json': hooksFile({ PostToolUse: [{ matcher: 'Bash', command }] }) } })
    h.root.scriptedLlm.enqueue(toolCall('c1', 'bash', { command: 'echo hello' }), { text: 'ok' })
    await h.run('say hello')
    expect(h.toolText('c1')).toContain('hello')
    expect(h.toolText('c1')).toContain('Context from a PostToolUse hook:\nlint found 2 warnings in a.ts')
    expect(requestText(h, 1)).toContain('lint found 2 warnings in a.ts')
    const input = JSON.parse(readFileSync(join(h.workspace, 'post.json'), 'utf8'))
    expect(input).toMatchObject({
      hook_event_name: 'PostToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'echo hello' },
      tool_use_id: 'c1',
      session_id: expect.any(String),
      cwd: h.workspace,
    })
    expect(input.tool_response.output).toContain('hello')
  })

  test("exit 2's stderr reaches the model as feedback on the result", async () => {
    const h = await boot({
      homeFiles: {
        'hooks.json': hooksFile({ PostToolUse: [{ command: 'echo "format the file before you go on" >&2; exit 2' }] }),
      },
    })
    h.root.scriptedLlm.enqueue(toolCall('c1', 'bash', { command: 'echo hi' }), { text: 'ok' })
    await h.run('go')
    expect(h.toolText('c1')).toContain('Feedback from a PostToolUse hook:\nformat the file before you go on')
  })
})
