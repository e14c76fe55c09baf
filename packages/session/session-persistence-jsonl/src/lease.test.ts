import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { onTestFinished, expect, test } from 'vitest'
import { tempDir } from '@dsh/test-harness/world'
import { dropLease, takeLease } from './lease.ts'

// Issue #28.4: taking over a stale lease was check-delete-create, so two processes could both believe they were
// the only writer, and dropping a lease deleted whatever lease was there. The racers run the built module
// (`pnpm build` first), each in a real process of its own.
const racer = join(import.meta.dirname, 'fixtures/lease-racer.mjs')
const RACERS = 12
const ROUNDS = 15

/** A pid that named a process of this host which has exited: what a crashed holder's lease names. */
async function deadPid(): Promise<number> {
  const proc = spawn('true')
  await new Promise((resolve) => proc.once('exit', resolve))
  return proc.pid!
}

interface Racer {
  proc: ChildProcess
  next(): Promise<string>
  send(line: string): void
}

function startRacer(file: string): Racer {
  const proc = spawn(process.execPath, [racer, file], { stdio: ['pipe', 'pipe', 'inherit'] })
  const lines: string[] = []
  const waiting: ((line: string) => void)[] = []
  let buffer = ''
  proc.stdout!.on('data', (chunk) => {
    buffer += chunk
    for (let end = buffer.indexOf('\n'); end >= 0; end = buffer.indexOf('\n')) {
      const line = buffer.slice(0, end)
      buffer = buffer.slice(end + 1)
      const waiter = waiting.shift()
      if (waiter) waiter(line)
      else lines.push(line)
    }
  })
  return {
    proc,
    next: () => (lines.length ? Promise.resolve(lines.shift()!) : new Promise((resolve) => waiting.push(resolve))),
    send: (line) => proc.stdin!.write(`${line}\n`),
  }
}

test(`${RACERS} processes taking over one stale lease at once: exactly one wins each round, and the lease is its`, async () => {
  const dir = tempDir('dsh-lease-race-')
  const file = join(dir, 'lease')
  const racers = Array.from({ length: RACERS }, () => startRacer(file))
  onTestFinished(() => racers.forEach((one) => one.proc.kill('SIGKILL')))
  for (const one of racers) expect(await one.next()).toBe('ready')
  const dead = await deadPid()
  for (let round = 0; round < ROUNDS; round++) {
    // A crashed holder's lease: the pid is gone, so every racer judges it stale and tries to take it over.
    writeFileSync(file, JSON.stringify({ pid: dead, host: hostname(), since: Date.now(), token: `crashed-${round}` }))
    const at = Date.now() + 300
    for (const one of racers) one.send(`go ${at}`)
    const answers = await Promise.all(racers.map((one) => one.next()))
    const winners = answers.flatMap((answer, index) =>
      answer.startsWith('won ') ? [{ index, token: answer.slice(4) }] : [],
    )
    expect(winners, `round ${round}: ${answers.join(', ')}`).toHaveLength(1)
    for (const answer of answers) if (!answer.startsWith('won ')) expect(answer).toBe('lost SESSION_LOCKED')
    const holder = JSON.parse(readFileSync(file, 'utf8'))
    expect(holder.pid).toBe(racers[winners[0]!.index]!.proc.pid)
    for (const one of racers) one.send('drop')
    for (const one of racers) expect(await one.next()).toBe('dropped')
    expect(existsSync(file)).toBe(false) // the winner dropped its own lease; nobody else had one to drop
  }
  // Nothing of the takeovers is left beside the lease: no claim, no temp file.
  expect(readdirSync(dir)).toEqual([])
})

test("a dropped lease never deletes another's: a lease taken over since stays", async () => {
  const dir = tempDir('dsh-lease-drop-')
  const file = join(dir, 'lease')
  const mine = takeLease(file, 's')
  // Another holder's lease in its place (as after a takeover this process did not see).
  const other = JSON.stringify({ pid: process.pid + 1, host: hostname(), since: Date.now(), token: 'someone-else' })
  writeFileSync(file, other)
  dropLease(file, mine)
  expect(readFileSync(file, 'utf8')).toBe(other)
  dropLease(file, 'not-a-token-anyone-took')
  expect(readFileSync(file, 'utf8')).toBe(other)
})

test('a lease is taken whole: the file is never seen without its holder, and a live holder is refused by name', async () => {
  const dir = tempDir('dsh-lease-whole-')
  const file = join(dir, 'lease')
  const token = takeLease(file, 's')
  expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ pid: process.pid, host: hostname(), token })
  expect(() => takeLease(file, 's')).toThrow('session s is already open in this process')
  dropLease(file, token)
  expect(readdirSync(dir)).toEqual([])
})

test('a takeover claim left by a process that died is passed over; one held by a live process refuses, naming the takeover', async () => {
  const dir = tempDir('dsh-lease-claim-')
  const file = join(dir, 'lease')
  const dead = await deadPid()
  const stale = JSON.stringify({ pid: dead, host: hostname(), since: 1, token: 'crashed' })
  writeFileSync(file, stale)
  const claim = (n: number) =>
    join(dir, `lease.takeover-${createHash('sha256').update(stale).digest('hex').slice(0, 16)}-${n}`)
  // A live process (this test's parent, which is not this process) is taking it over this moment.
  writeFileSync(claim(0), JSON.stringify({ pid: process.ppid, host: hostname(), since: 1 }))
  expect(() => takeLease(file, 's')).toThrow('session s is being taken over by another dsh process; try again')
  expect(readFileSync(file, 'utf8')).toBe(stale)
  // That process died mid-takeover: the next one takes the lease, and no claim is left.
  writeFileSync(claim(0), JSON.stringify({ pid: dead, host: hostname(), since: 1 }))
  const token = takeLease(file, 's')
  expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ pid: process.pid, token })
  expect(readdirSync(dir)).toEqual(['lease'])
})
