/**
 * The Seatbelt (sandbox-exec) profile for macOS. Untested in CI (Linux only); kept small so it can be read.
 * Everything is allowed except writing: writes go only to the writable roots (passed as parameters, so no
 * path is ever spliced into the profile text), the terminal and null devices, and the shared temp folders,
 * which is why Seatbelt's enforcement is `partial`.
 */
export function seatbeltProfile(rootCount: number, denyNetwork: boolean): string {
  const roots = Array.from({ length: rootCount }, (_, i) => `(subpath (param "WRITABLE_ROOT_${i}"))`)
  return [
    '(version 1)',
    '(allow default)',
    '(deny file-write*)',
    '(allow file-write* (literal "/dev/null") (literal "/dev/zero") (literal "/dev/dtracehelper") (literal "/dev/ptmx")',
    '  (regex #"^/dev/tty") (regex #"^/dev/fd/"))',
    '(allow file-write* (subpath "/private/tmp") (subpath "/private/var/folders"))',
    ...(roots.length ? [`(allow file-write* ${roots.join(' ')})`] : []),
    ...(denyNetwork ? ['(deny network*)'] : []),
  ].join('\n')
}

/** sandbox-exec arguments (before the command): the profile and one `-D` parameter per writable root. */
export function seatbeltArgs(writableRoots: string[], denyNetwork: boolean): string[] {
  return [
    '-p',
    seatbeltProfile(writableRoots.length, denyNetwork),
    ...writableRoots.flatMap((root, i) => ['-D', `WRITABLE_ROOT_${i}=${root}`]),
  ]
}
