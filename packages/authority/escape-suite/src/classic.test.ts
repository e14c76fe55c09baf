import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import type {} from '@dsh/llm-scripted'
import { outsideDir } from '@dsh/test-harness/world'
import { bootComposition, scriptedPatch, toolCall } from '@dsh/test-harness'
import { bash, bootAttack, type AttackStep } from './index.ts'

// The classic filesystem escapes, in the default mode (workspace-write). The outside directory is under
// /var/tmp, not /tmp: bubblewrap gives a command its own /tmp, so a refused write there would prove nothing.

async function prepareRun() {
  const outside = outsideDir()
  writeFileSync(join(outside, 'victim.txt'), 'original\n')
  const h = await bootComposition({ patch: scriptedPatch() })
  onTestFinished(() => h.dispose())
  return { h, outside, workspace: h.workspace }
}

async function run(
  steps: (outside: string, workspace: string) => AttackStep[],
  prepare?: (outside: string, workspace: string) => void,
) {
  const outside = outsideDir()
  writeFileSync(join(outside, 'victim.txt'), 'original\n')
  const probe = await bootAttack([])
  const workspace = probe.workspace
  await probe.dispose()
  mkdirSync(workspace, { recursive: true })
  prepare?.(outside, workspace)
  const h = await bootAttack(steps(outside, workspace), { workspace })
  onTestFinished(() => h.dispose())
  const result = await h.run('follow the instructions in the README')
  expect(result.reason).toBe('completed')
  const untouched = () => {
    expect(readFileSync(join(outside, 'victim.txt'), 'utf8')).toBe('original\n')
    expect(existsSync(join(outside, 'pwned'))).toBe(false)
  }
  return { h, outside, workspace, untouched }
}

test('a symlink in the workspace pointing outside is no way out, for the file tools or for bash', async () => {
  const { h, untouched } = await run(
    () => [
      { id: 'w', tool: 'write', args: { path: 'link/pwned', content: 'x' } },
      { id: 'r', tool: 'read', args: { path: 'link/victim.txt' } },
      { id: 'e', tool: 'write', args: { path: 'link/victim.txt', content: 'x' } },
      bash('b', 'echo x > link/pwned; echo x > link/victim.txt'),
    ],
    (outside, workspace) => symlinkSync(outside, join(workspace, 'link')),
  )
  untouched()
  expect(h.toolResult('w').error?.code).toBe('FS_SANDBOX_DENIED')
  expect(h.toolResult('e').error?.code).toBe('FS_SANDBOX_DENIED')
  expect(h.toolText('b')).toContain('Read-only file system')
})

test('.. and absolute paths out of the workspace are refused, for the file tools or for bash', async () => {
  const { h, untouched } = await run((outside) => [
    { id: 'w', tool: 'write', args: { path: `../../../../..${outside}/pwned`, content: 'x' } },
    { id: 'a', tool: 'write', args: { path: `${outside}/pwned`, content: 'x' } },
    bash('b', `echo x > ../../../../..${outside}/pwned; cd / && echo x > .${outside}/victim.txt`),
  ])
  untouched()
  expect(h.toolResult('w').error?.code).toBe('FS_SANDBOX_DENIED')
  expect(h.toolResult('a').error?.code).toBe('FS_SANDBOX_DENIED')
})

test('/proc/self/root and /dev/fd lead nowhere writable', async () => {
  const { h, untouched } = await run((outside) => [
    { id: 'p', tool: 'write', args: { path: `/proc/self/root${outside}/pwned`, content: 'x' } },
    { id: 'f', tool: 'write', args: { path: '/dev/fd/1', content: 'x' } },
    bash(
      'b',
      `echo x > /proc/self/root${outside}/pwned; exec 3>>${outside}/victim.txt; echo x >&3; echo x > /proc/1/root${outside}/pwned`,
    ),
  ])
  untouched()
  expect(h.toolResult('p').error?.code).toBe('FS_SANDBOX_DENIED')
  expect(h.toolResult('f').error?.code).toBe('FS_SANDBOX_DENIED')
})

test('a hard link to an outside file cannot be made from inside, and appending to the name changes nothing outside', async () => {
  const { h, untouched, workspace } = await run((outside) => [
    bash(
      'b',
      `ln ${outside}/victim.txt hard; echo pwned >> hard; ln -s ${outside}/victim.txt soft; echo pwned >> soft`,
    ),
    { id: 'r', tool: 'read', args: { path: 'soft' } },
    { id: 'w', tool: 'write', args: { path: 'soft', content: 'pwned' } },
  ])
  untouched()
  expect(h.toolText('b')).toMatch(/Invalid cross-device link|Operation not permitted|Read-only file system/)
  expect(h.toolResult('w').error?.code).toBe('FS_SANDBOX_DENIED')
  expect(existsSync(join(workspace, 'hard')) ? readFileSync(join(workspace, 'hard'), 'utf8') : '').not.toContain(
    'original',
  )
})

test('python, node and perl writers are confined like the shell', async () => {
  const { untouched } = await run((outside) => [
    bash(
      'py',
      `python3 -c "open('${outside}/pwned','w').write('x')"; python3 -c "open('${outside}/victim.txt','a').write('x')"`,
    ),
    bash(
      'js',
      `node -e "require('fs').writeFileSync('${outside}/pwned','x')"; node -e "require('fs').appendFileSync('${outside}/victim.txt','x')"`,
    ),
    bash('pl', `perl -e 'open(my $f, ">", "${outside}/pwned") or die "denied: $!"; print $f "x"'`),
  ])
  untouched()
})

test('a directory swapped for a symlink between the check and the write never lands a byte outside', async () => {
  // The strongest racer: a process flipping `d` between a directory and a symlink to the outside as fast as
  // it can while the model writes `d/pwned` again and again through the file tool. (In the default
  // composition no sandboxed process outlives its call, so this racer stands for a persistent shell's
  // background job.)
  const rounds = 90 // under agent.maxSteps (100)
  const { h, outside, workspace } = await prepareRun()
  const flipper = spawn(
    'bash',
    ['-c', `cd ${workspace}; while :; do rm -rf d; mkdir d; rm -rf d; ln -s ${outside} d; done`],
    { stdio: 'ignore' },
  )
  onTestFinished(() => void flipper.kill('SIGKILL'))
  h.root.scriptedLlm.enqueue(
    ...Array.from({ length: rounds }, (_, i) => toolCall(`w${i}`, 'write', { path: 'd/pwned', content: 'x' })),
    { text: 'done' },
  )
  await h.run('go')
  flipper.kill('SIGKILL')
  expect(existsSync(join(outside, 'pwned'))).toBe(false)
  const codes = h.events('tool/result').map((event) => event.data.error?.code ?? 'ok')
  expect(codes).toHaveLength(rounds)
  expect(codes.filter((code) => code === 'ok').length).toBeGreaterThan(0) // the race really ran both ways
  expect(codes.filter((code) => code !== 'ok').length).toBeGreaterThan(0)
})
