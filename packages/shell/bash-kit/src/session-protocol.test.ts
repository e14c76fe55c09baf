import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, expect, test } from 'vitest'
import { commandLines, findMarker, markerLine, undecidedTail } from './session-protocol.ts'

const NONCE = 'dshmark7f3a'
/** Every awkward character a command may hold: quotes, backslashes, newlines, tabs, control bytes, non-ASCII. */
const AWKWARD = `echo 'single' "double" \\back\\slash $HOME \`tick\`\n\ttabbed\r\x1b[31mred\x03 é ✓ 𝄞 end`

let dir: string | undefined
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true })
  dir = undefined
})

/**
 * Types `lines` into a real bash on a real terminal (util-linux `script` gives it a PTY in canonical mode,
 * where a line longer than 4095 bytes loses its end) and resolves with what the terminal printed once the
 * marker of `seq` arrived.
 */
function typeIntoTerminal(cwd: string, lines: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    // HISTFILE off: an interactive bash writes its history into HOME as it exits, which raced the clean-up.
    const env = { PATH: process.env.PATH, HOME: cwd, TERM: 'dumb', HISTFILE: '/dev/null' }
    const child = spawn('/usr/bin/script', ['-qfec', 'bash --norc --noprofile', '/dev/null'], {
      cwd,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let out = ''
    const timer = setTimeout(() => (child.kill('SIGKILL'), reject(new Error(`no marker within 30 s:\n${out}`))), 30_000)
    child.stdout.on('data', (chunk) => {
      out += chunk
      if (findMarker(out, NONCE)) {
        clearTimeout(timer)
        child.stdin.end('exit\n')
      }
    })
    // Resolved once bash and script have exited, so nothing writes in the folder while the test removes it.
    child.on('close', () =>
      findMarker(out, NONCE) ? resolve(out) : reject(new Error(`bash exited before the marker:\n${out}`)),
    )
    child.on('error', reject)
    child.stdin.write(lines.join('\n') + '\n')
  })
}

/** `text` written the test's own way as the inside of a bash `$'…'` string (NUL left out: bash cannot hold it). */
function ansiC(text: string): string {
  return [...Buffer.from(text)]
    .map((byte) =>
      byte === 0
        ? ''
        : byte >= 0x20 && byte < 0x7f && byte !== 0x5c && byte !== 0x27
          ? String.fromCharCode(byte)
          : `\\x${byte.toString(16).padStart(2, '0')}`,
    )
    .join('')
}

test('a command is typed as printable ASCII lines within the line budget, whatever it holds', () => {
  const long = AWKWARD.repeat(200)
  const lines = commandLines(long, NONCE, 3)
  expect(lines.length).toBeGreaterThan(2)
  for (const line of lines as string[]) {
    expect(line).toMatch(/^[\x20-\x7e]+$/)
    expect(line.length).toBeLessThanOrEqual(1024 + "__dsh_cmd+=$''".length)
  }
  expect(lines[0]).toMatch(/^__dsh_cmd=\$'/)
  expect(lines.slice(1, -1).every((line) => line.startsWith("__dsh_cmd+=$'"))).toBe(true)
  expect(lines.at(-1)).toBe(`eval "$__dsh_cmd"; ${markerLine(NONCE, 3)}`)
})

test.skipIf(!existsSync('/usr/bin/script'))(
  'a long, awkward command reaches bash on a terminal intact, and its marker reports status and directory',
  async () => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-protocol-')))
    const text = `${AWKWARD.repeat(120)}\0dropped-nul`
    const command = `mkdir -p 'sub dir:x' && cd 'sub dir:x' && printf '%s' $'${ansiC(text)}' > out.txt; false`
    expect(command.length).toBeGreaterThan(8_000)
    const printed = await typeIntoTerminal(dir, commandLines(command, NONCE, 7))
    expect(readFileSync(join(dir, 'sub dir:x', 'out.txt'), 'utf8')).toBe(text.replace('\0', ''))
    const marker = findMarker(printed, NONCE)!
    expect(marker).toMatchObject({ seq: 7, status: 1, cwd: join(dir, 'sub dir:x') })
    expect(printed.slice(marker.start, marker.end)).toMatch(new RegExp(`^\\r?\\n${NONCE}:7:1:.*:${NONCE}\\r?\\n$`))
  },
)

test('a marker is found only when complete, with CRLF or LF ends and a directory holding colons', () => {
  expect(findMarker(`out\r\n${NONCE}:2:0:/tmp/a:b:${NONCE}\r\nafter`, NONCE)).toEqual({
    seq: 2,
    status: 0,
    cwd: '/tmp/a:b',
    start: 3,
    end: 3 + `\r\n${NONCE}:2:0:/tmp/a:b:${NONCE}\r\n`.length,
  })
  expect(findMarker(`${NONCE}:5:130:/:${NONCE}\n`, NONCE)).toMatchObject({ seq: 5, status: 130, cwd: '/', start: 0 })
  expect(findMarker(`out\n${NONCE}:2:0:/tmp:${NONCE}`, NONCE)).toBeUndefined()
  expect(findMarker(`out\n${NONCE}:2:0:/tmp`, NONCE)).toBeUndefined()
  expect(findMarker(`out\nother:2:0:/tmp:other\n`, NONCE)).toBeUndefined()
})

test('the tail that may hold the start of a marker is kept back, and no more', () => {
  // Output that cannot begin a marker is handed on at once (a running command's lines show live).
  expect(undecidedTail('plain output of some length', NONCE)).toBe(0)
  expect(undecidedTail('a line\r\n', NONCE)).toBe(2)
  expect(undecidedTail(`a line\n${NONCE.slice(0, 5)}`, NONCE)).toBe(6)
  expect(undecidedTail(`text${NONCE.slice(0, 3)}`, NONCE)).toBe(3)
  const text = `output\r\n${NONCE}:3:0:/tm`
  expect(undecidedTail(text, NONCE)).toBe(text.length - 'output'.length)
  expect(undecidedTail(`${NONCE}:3`, NONCE)).toBe(`${NONCE}:3`.length)
})
