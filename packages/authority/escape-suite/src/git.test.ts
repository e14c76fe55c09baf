// A hostile repository configures the git dsh runs itself (issue #27.5; docs/security.md, "Git that dsh
// runs"): `.git/config` as a hostile clone would have it (filters, textconv, external diff, pager,
// fsmonitor, hooks) and a `.gitattributes` the model writes. Checkpoints, session changes, a rewind and the
// runtime context run git; none of those programs may run, and the snapshot holds the raw bytes.
import { execFileSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import { expect, onTestFinished, test } from 'vitest'
import type {} from '@dsh/llm-scripted'
import type {} from '@dsh/session-changes'
import { bootComposition, scriptedPatch, toolCall as call } from '@dsh/test-harness'
import { outsideDir } from '@dsh/test-harness/world'
import type {} from '@dsh/checkpoints'

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
  })

/** Plants, in `.git/config` and `.git/hooks`, a program for every way a repository can make git run one. */
function plantTraps(workspace: string, traps: string) {
  const trap = join(traps, 'trap.sh')
  // Each records that it ran and the environment it ran with; the filter also turns contents upper-case.
  writeFileSync(
    trap,
    `#!/bin/sh\necho "$1" >> '${traps}/ran'\nenv > '${traps}/env-'"$1"\ncase "$1" in clean|smudge) tr a-z A-Z ;; textconv) cat "$2" ;; esac\nexit 0\n`,
  )
  chmodSync(trap, 0o755)
  const hooks = join(traps, 'hooks')
  mkdirSync(hooks)
  for (const hook of [
    'post-index-change',
    'pre-commit',
    'post-checkout',
    'reference-transaction',
    'pre-auto-gc',
    'fsmonitor-watchman',
  ]) {
    writeFileSync(join(hooks, hook), `#!/bin/sh\n'${trap}' hook-${hook}\n`)
    chmodSync(join(hooks, hook), 0o755)
    writeFileSync(join(workspace, '.git/hooks', hook), `#!/bin/sh\n'${trap}' git-hook-${hook}\n`)
    chmodSync(join(workspace, '.git/hooks', hook), 0o755)
  }
  const config = readFileSync(join(workspace, '.git/config'), 'utf8')
  writeFileSync(
    join(workspace, '.git/config'),
    config +
      `[filter "evil"]\n\tclean = '${trap}' clean\n\tsmudge = '${trap}' smudge\n\trequired = true\n` +
      `[diff "evil"]\n\ttextconv = '${trap}' textconv\n\tcommand = '${trap}' diff-driver\n` +
      `[diff]\n\texternal = '${trap}' external\n` +
      `[core]\n\tpager = '${trap}' pager\n\tfsmonitor = '${trap}' fsmonitor\n\thooksPath = ${hooks}\n` +
      `[pager]\n\tstatus = '${trap}' pager-status\n`,
  )
}

test("no filter, textconv, external diff, pager, fsmonitor or hook of the repository's runs while dsh checkpoints, lists changes and rewinds; snapshots hold the raw bytes", async () => {
  const traps = outsideDir('dsh-git-traps-')
  const h = await bootComposition({
    workspaceFiles: { 'a.txt': 'one\n', 'b.txt': 'kept\n' },
    patch: scriptedPatch({ runtimeContext: true }),
  })
  onTestFinished(() => h.dispose())
  git(h.workspace, 'init', '-q')
  git(h.workspace, 'add', '-A')
  git(h.workspace, 'commit', '-q', '-m', 'initial')
  plantTraps(h.workspace, traps)

  // Turn 1: the model names the filter and diff driver for every file, then changes a tracked file.
  h.root.scriptedLlm.enqueue(
    call('attrs', 'bash', { command: "printf '* filter=evil diff=evil\\n' > .gitattributes" }),
    call('change', 'bash', { command: 'printf "raw content\\n" > a.txt && printf "new file\\n" > c.txt' }),
    { text: 'done' },
  )
  await h.run('go')
  h.root.scriptedLlm.enqueue(call('more', 'bash', { command: 'printf "second\\n" >> a.txt' }), { text: 'done' })
  await h.run('go')
  expect(h.toolResult('more').error).toBeUndefined()
  const { session } = await h.agent()
  const changes = await h.root.sessionChanges.changes(session.id)
  expect(changes.files.map((entry) => entry.path).sort()).toEqual(['.gitattributes', 'a.txt', 'c.txt'])
  const done = await h.root.checkpoints.rewind(session, { toTurn: 2, actor: 'user:cli-flag' })
  expect(done.restored.map((entry) => entry.path)).toEqual(['a.txt'])
  expect(h.events('runtime/context').length).toBeGreaterThan(0)

  // Nothing of the repository's ran: no marker, no environment dump.
  expect(readdirSync(traps).sort()).toEqual(['hooks', 'trap.sh'])
  // The snapshot is of the raw bytes: a clean filter would have upper-cased them.
  const after = h
    .events('checkpoint/after')
    .find((event) => event.data.callId === 'change' && event.data.path === 'a.txt')!.data.state
  expect(after).toEqual({ sha256: createHash('sha256').update('raw content\n').digest('hex'), bytes: 12 })
  expect(readFileSync(join(h.workspace, 'a.txt'), 'utf8')).toBe('raw content\n')

  // The traps are armed: the same repository runs them for a git started as a user would.
  try {
    git(h.workspace, 'status', '--porcelain')
  } catch {
    // a trap that is no real fsmonitor or filter process may make git fail: that it ran is what counts
  }
  expect(existsSync(join(traps, 'ran'))).toBe(true)
})
